# Faults: kill -9 of the postmaster in the middle of model loads, then a
# restart (crash recovery).  After each crash the catalog must be
# consistent: every stored model's bytes match their sha256 and size, every
# model is one of the files that were being loaded (no partial model), a
# transaction that loaded two models left both or neither, the indexes and
# the heap (with its TOAST table) pass amcheck, and every model predicts.
#
#   ONNX_PG_CRASH_CYCLES  crashes (default 3)
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use OnnxPgTest;

my $cycles = $ENV{ONNX_PG_CRASH_CYCLES} // 3;
my $loaders = 4;

my $node = start_node('crash', conf => "restart_after_crash = on\n");
$node->safe_psql('postgres', 'CREATE EXTENSION amcheck');

# Model files, from 145 bytes to 3 MB (big ones are TOASTed in many chunks),
# each predicting like logreg or logreg_v2.
my $dir = $node->basedir;
my @files = (
	model_path('logreg.onnx'), model_path('logreg_v2.onnx'),
	padded_model(model_path('logreg.onnx'), 1_000_000, "$dir/m2.onnx", 'a'),
	padded_model(model_path('logreg_v2.onnx'), 3_000_000, "$dir/m3.onnx", 'b'),
	padded_model(model_path('logreg.onnx'), 2_000_000, "$dir/m4.onnx", 'c'));
my %known = map { file_sha256($_) => $_ } @files;
$node->safe_psql('postgres',
	'CREATE TABLE files (i int, path text, sha text);'
	  . join('', map { "INSERT INTO files VALUES ($_, '$files[$_]', '" . file_sha256($files[$_]) . "');" }
		  0 .. $#files));
$node->safe_psql('postgres', qq{
	SELECT onnx_load_model_file('ref_a', '$files[0]');
	SELECT onnx_load_model_file('ref_b', '$files[1]');
});

my $script = "$dir/load.sql";
write_file_bytes($script, q{
\set n random(1, 12)
\set f random(0, 4)
SELECT onnx_load_model_file('m' || :n, (SELECT path FROM files WHERE i = :f), replace => true);
BEGIN;
SELECT onnx_load_model_file('pair_a', (SELECT path FROM files WHERE i = :f), replace => true);
SELECT onnx_load_model_file('pair_b', (SELECT path FROM files WHERE i = :f), replace => true);
COMMIT;
\set d random(1, 12)
SELECT onnx_drop_model('m' || :d, if_exists => true);
});

my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $inflight_total = 0;
for my $cycle (1 .. $cycles)
{
	my ($out, $err) = ('', '');
	my $bench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $loaders, '-j', 2, '-T', 60, '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	# let the loads run, then crash in their middle
	sleep(2 + rand(2));
	my $inflight = $node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_stat_activity
		 WHERE state <> 'idle' AND query ~ 'onnx_load_model_file|onnx_drop_model|COMMIT'});
	$node->kill9;
	IPC::Run::finish($bench);
	$inflight_total += $inflight;
	note "cycle $cycle: killed with $inflight loads in flight";

	# old backends notice the postmaster's death and exit; then restart
	# (until then the new postmaster refuses to start: the old one's PID is
	# still in postmaster.pid, or its shared memory is still attached)
	my $started = 0;
	for my $try (1 .. 60)
	{
		sleep(0.5);
		if ($node->start(fail_ok => 1))
		{
			$started = 1;
			last;
		}
		# a failed start remembers the stale PID; forget it to try again
		$node->{_pid} = undef;
	}
	ok($started, "cycle $cycle: restarted after kill -9 of the postmaster");
	last unless $started;
	isnt($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
		$start_time, "cycle $cycle: it was a real restart");
	$start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM onnx_model_store
		 WHERE sha256 <> sha256(model) OR size_bytes <> length(model)
		    OR version < 1 OR owner IS NULL}),
		'0', "cycle $cycle: every model's bytes match its sha256 and size");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM onnx_model_store s
		 WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.sha = encode(s.sha256, 'hex'))}),
		'0', "cycle $cycle: every model is a whole file that was loaded (no partial model)");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM
		  (SELECT (SELECT sha256 FROM onnx_model_store WHERE name = 'pair_a') AS a,
		          (SELECT sha256 FROM onnx_model_store WHERE name = 'pair_b') AS b) s
		 WHERE a IS DISTINCT FROM b}),
		'0', "cycle $cycle: a transaction that loaded two models left both or neither");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM (
		  SELECT bt_index_check(c.oid, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		   WHERE i.indrelid = 'onnx_model_store'::regclass) s}),
		$node->safe_psql('postgres',
			"SELECT count(*) FROM pg_index WHERE indrelid = 'onnx_model_store'::regclass"),
		"cycle $cycle: the catalog's indexes pass amcheck");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM verify_heapam('onnx_model_store', check_toast => true)"),
		'0', "cycle $cycle: the catalog's heap and TOAST table pass amcheck");
	# every stored model parses, validates and predicts like its origin
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM onnx_models m
		 WHERE onnx_predict(m.name, '{5.9,3.0,5.1,1.8}', 'output_probability')
		       NOT IN (onnx_predict('ref_a', '{5.9,3.0,5.1,1.8}', 'output_probability'),
		               onnx_predict('ref_b', '{5.9,3.0,5.1,1.8}', 'output_probability'))}),
		'0', "cycle $cycle: every stored model predicts");
	my $n = $node->safe_psql('postgres', 'SELECT count(*) FROM onnx_models');
	cmp_ok($n, '>', 2, "cycle $cycle: $n models survived");
}

ok($node->log_contains(qr/database system was interrupted|was not properly shut down/),
	'the server went through crash recovery');
diag "crash recovery: $cycles kill -9 of the postmaster with $inflight_total loads in flight in all, catalog consistent after each";
$node->stop;
done_testing();

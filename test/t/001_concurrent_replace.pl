# Concurrency: clients call onnx_predict while one connection replaces the
# model they use every 0.5 s (alternating between two versions with
# different outputs) and another drops and re-creates a second model.
#
# Every result must be exactly the old or the new model's output (never a
# mix, never garbage), no client may see an unexpected error, no backend may
# crash, and the clients' backends must not grow.
#
#   ONNX_PG_STRESS_SECONDS  duration (default 60)
#   ONNX_PG_STRESS_CLIENTS  clients (default 16)
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use OnnxPgTest;

my $duration = $ENV{ONNX_PG_STRESS_SECONDS} // 60;
my $clients = $ENV{ONNX_PG_STRESS_CLIENTS} // 16;
my $growth_limit_kb = 10 * 1024;

my $node = start_node('stress', max_connections => $clients + 20);
my $file_a = model_path('logreg.onnx');
my $file_b = model_path('logreg_v2.onnx');
my $iris = iris_features();
my $t0 = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

# Reference outputs of both versions for every iris row, from models that
# nobody touches.
$node->safe_psql('postgres', qq{
	SELECT onnx_load_model_file('ref_a', '$file_a');
	SELECT onnx_load_model_file('ref_b', '$file_b');
	SELECT onnx_load_model_file('swap', '$file_a');
	SELECT onnx_load_model_file('other', '$file_a');
	CREATE TABLE iris (id int PRIMARY KEY, f real[]);
});
$node->safe_psql('postgres',
	'INSERT INTO iris VALUES '
	  . join(', ', map { "($_, '$iris->{$_}')" } sort { $a <=> $b } keys %$iris));
$node->safe_psql('postgres', q{
	CREATE TABLE expected AS
	  SELECT id, f, onnx_predict('ref_a', f, 'output_probability') AS pa,
	         onnx_predict('ref_b', f, 'output_probability') AS pb,
	         onnx_predict('ref_a', f) AS la, onnx_predict('ref_b', f) AS lb
	    FROM iris;
	-- the other model may be missing at any moment: that, and only that, is allowed
	-- a result that is no version's output fails the client with a message
	CREATE FUNCTION mismatch(what text) RETURNS int LANGUAGE plpgsql AS $$
	BEGIN
		RAISE EXCEPTION 'unexpected result: %', what;
	END $$;
	CREATE FUNCTION try_predict(m text, f real[], o text) RETURNS real[]
	LANGUAGE plpgsql AS $$
	BEGIN
		RETURN onnx_predict(m, f, o);
	EXCEPTION WHEN undefined_object THEN
		RETURN NULL;
	END $$;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM expected WHERE pa = pb'),
	'0', 'the two versions differ on every row');

# A result that is neither version's raises an error: pgbench counts it as
# a failed client.
my $script = $node->basedir . '/stress.sql';
# Each prediction is computed once (OFFSET 0 keeps the planner from
# inlining the subquery, which would call onnx_predict once per reference:
# calls in one statement may see different versions, see
# docs/reliability.md).
OnnxPgTest::write_file_bytes($script, q{
\set id random(1, 150)
SELECT CASE WHEN r.p = e.pa OR r.p = e.pb THEN 1 ELSE mismatch('swap ' || r.p::text) END
  FROM expected e,
       LATERAL (SELECT onnx_predict('swap', e.f, 'output_probability') AS p OFFSET 0) r
 WHERE e.id = :id;
SELECT CASE WHEN r.p IS NULL OR r.p = e.pa THEN 1 ELSE mismatch('other ' || r.p::text) END
  FROM expected e,
       LATERAL (SELECT try_predict('other', e.f, 'output_probability') AS p OFFSET 0) r
 WHERE e.id = :id;
SELECT CASE WHEN r.l = e.la OR r.l = e.lb THEN 1 ELSE mismatch('swap label ' || r.l::text) END
  FROM expected e,
       LATERAL (SELECT onnx_predict('swap', e.f) AS l OFFSET 0) r
 WHERE e.id = :id;
});

my ($out, $err) = ('', '');
my $bench;
{
	# (PostgreSQL::Test::Utils names every connection after the test script)
	local $ENV{PGAPPNAME} = 'onnx_stress';
	$bench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', ($clients < 4 ? $clients : 4),
			'-T', $duration, '-f', $script, '-h', $node->host, '-p', $node->port,
			'postgres'
		],
		'>', \$out, '2>', \$err);
}

# one connection replaces, another drops and re-creates, a third (a
# long-lived session, so it has the model cached) checks each new version
my $replacer = $node->background_psql('postgres');
my $dropper = $node->background_psql('postgres');
my $checker = $node->background_psql('postgres');
my $start = time;
my ($replaced, $recreated, $version_checks, $new_conn_checks, $new_conn_ok) = (0, 0, 0, 0, 0);
my (%rss_first, %rss_last);
my $use_b = 1;
my $tick = $start;
while (time - $start < $duration - 1)
{
	my $file = $use_b ? $file_b : $file_a;
	my $want = $use_b ? 'pb' : 'pa';
	$replacer->query_safe("SELECT onnx_load_model_file('swap', '$file', replace => true)");
	$replaced++;
	$version_checks++
	  if $checker->query_safe(
		"SELECT onnx_predict('swap', f, 'output_probability') = $want FROM expected WHERE id = 77")
	  eq 't';
	# now and then, a new connection too
	if ($replaced % 10 == 1)
	{
		$new_conn_checks++;
		$new_conn_ok++
		  if $node->safe_psql('postgres',
			"SELECT onnx_predict('swap', f, 'output_probability') = $want FROM expected WHERE id = 77")
		  eq 't';
	}
	$use_b = !$use_b;

	$dropper->query_safe("SELECT onnx_drop_model('other')");
	$dropper->query_safe("SELECT onnx_load_model_file('other', '$file_a')");
	$recreated++;

	# memory of the clients' backends: first sample after a warm-up, then the latest
	if (time - $start > 5)
	{
		my @pids = split /\n/, $checker->query_safe(
			"SELECT pid FROM pg_stat_activity WHERE application_name = 'onnx_stress'");
		for my $pid (@pids)
		{
			my $kb = eval { vmrss_kb($pid) };
			note "no memory figure for backend $pid: $@" unless defined $kb;
			next unless defined $kb;
			$rss_first{$pid} //= $kb;
			$rss_last{$pid} = $kb;
		}
	}
	$tick += 0.5;
	my $rest = $tick - time;
	sleep($rest) if $rest > 0;
}
$_->quit for ($replacer, $dropper, $checker);
IPC::Run::finish($bench);
my $bench_rc = $? >> 8;

note "pgbench output:\n$out\n$err";
is($bench_rc, 0, 'pgbench: no client failed');
unlike($err, qr/ERROR|aborted/, 'pgbench: no errors');
my ($tx) = $out =~ /number of transactions actually processed: (\d+)/;
ok(defined $tx && $tx > 0, "clients ran transactions (" . ($tx // 0) . ")");
my ($failed) = $out =~ /number of failed transactions: (\d+)/;
is($failed // 0, 0, 'no failed transactions');
cmp_ok($replaced, '>=', int(0.9 * ($duration - 1) / 0.5), "model replaced $replaced times (every 0.5 s)");
is($version_checks, $replaced,
	'after each replacement a session that had the old version cached predicts with the new one');
is($new_conn_ok, $new_conn_checks, "so does a new connection ($new_conn_checks checks)");
cmp_ok($recreated, '>', 0, "second model dropped and re-created $recreated times");

my $max_growth = 0;
for my $pid (keys %rss_first)
{
	my $g = $rss_last{$pid} - $rss_first{$pid};
	$max_growth = $g if $g > $max_growth;
}
cmp_ok(scalar(keys %rss_first), '>=', $clients, 'sampled the memory of every client backend');
cmp_ok($max_growth, '<', $growth_limit_kb,
	"backend memory bounded: largest growth $max_growth kB over the run");

is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$t0, 'no backend crashed (the postmaster never restarted)');
ok(!$node->log_contains(qr/terminated by signal|server process .* was terminated/),
	'no backend was terminated by a signal');

diag sprintf(
	"concurrent replace: %d clients x %d s, %d transactions (%.0f/s), %d replacements, %d drop+re-create, max backend growth %d kB",
	$clients, $duration, $tx // 0, ($tx // 0) / $duration, $replaced, $recreated, $max_growth);

$node->stop;
done_testing();

# onnx_pg in shared_preload_libraries: the postmaster stays single-threaded,
# and onnx_stat_models / onnx_stat_progress see every backend, parallel
# workers included.  (sql/onnx_observe.sql covers the same functions without
# preloading.)
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $models = $ENV{ONNX_PG_MODELS}
  or plan skip_all => 'ONNX_PG_MODELS is not set (scripts/test.sh sets it)';

my $node = PostgreSQL::Test::Cluster->new('observe');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'onnx_pg'
onnx.stats_max = 200
max_worker_processes = 8
max_parallel_workers = 4
jit = off
));
$node->start;

# threads of a process, from /proc
sub tasks
{
	my ($pid) = @_;
	opendir(my $d, "/proc/$pid/task") or return -1;
	my $n = grep { !/^\./ } readdir($d);
	closedir($d);
	return $n;
}

sub postmaster_pid
{
	open(my $f, '<', $node->data_dir . '/postmaster.pid') or die "no postmaster.pid: $!";
	my $pid = <$f>;
	close($f);
	chomp $pid;
	return $pid;
}

SKIP:
{
	skip 'no /proc', 1 unless -d '/proc/self/task';
	is(tasks(postmaster_pid()), 1, 'the postmaster has one thread after start');
}

$node->safe_psql('postgres', qq(
CREATE EXTENSION onnx_pg;
SELECT onnx_load_model_file('iris', '$models/iris_rf.onnx');
SELECT onnx_load_model_file('cnn', '$models/small_cnn.onnx');
CREATE TABLE t AS SELECT i, ARRAY[4 + (i % 30) / 10.0, 3.0, 1 + (i % 50) / 10.0, (i % 25) / 10.0]::real[] AS f
  FROM generate_series(1, 2000) i;
ANALYZE t;
));

is($node->safe_psql('postgres', 'SHOW onnx.stats_max'), '200', 'onnx.stats_max is set at start');

# two backends
$node->safe_psql('postgres', q(SELECT count(onnx_predict('iris', f)) FROM t WHERE i <= 100));
$node->safe_psql('postgres', q(
SELECT count(onnx_predict('iris', f)) FROM t WHERE i <= 50;
SELECT onnx_predict_batch('iris', array_agg(f)) IS NOT NULL FROM t WHERE i <= 10;
));
my ($calls, $rows, $loads, $errors) = split(/\|/,
	$node->safe_psql('postgres', q(SELECT calls, rows, loads, errors FROM onnx_stat_models WHERE model = 'iris')));
is($rows, 160, 'rows of two backends are summed');
ok($calls >= 2 && $calls <= 151, "calls are counted ($calls)");
is($loads, 2, 'each backend built its session once');
is($errors, 0, 'no errors yet');

# an error in a third backend
$node->psql('postgres', q(SELECT onnx_run('cnn', '{"input": [[[[1, 2], [3, 4]]]]}')));
is($node->safe_psql('postgres', q(SELECT errors FROM onnx_stat_models WHERE model = 'cnn')),
	'1', 'a failed run is counted as an error');

# parallel workers report their calls too
my $plan = $node->safe_psql('postgres', q(
SET force_parallel_mode = on;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
EXPLAIN (COSTS OFF) SELECT count(onnx_predict('iris', f)) FROM t;
));
like($plan, qr/Gather/, 'the query runs in parallel workers');
my $before = $node->safe_psql('postgres', q(SELECT rows FROM onnx_stat_models WHERE model = 'iris'));
$node->safe_psql('postgres', q(
SET force_parallel_mode = on;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SELECT count(onnx_predict('iris', f)) FROM t;
));
is($node->safe_psql('postgres', q(SELECT rows FROM onnx_stat_models WHERE model = 'iris')) - $before,
	2000, 'rows scored by parallel workers are counted');

# other databases are listed with all_databases => true
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', qq(
CREATE EXTENSION onnx_pg;
SELECT onnx_load_model_file('iris', '$models/iris_rf.onnx');
SELECT onnx_predict('iris', '{5.1,3.5,1.4,0.2}');
));
is($node->safe_psql('postgres', q(SELECT count(*) FROM onnx_stat_models WHERE model = 'iris')),
	'1', 'the view shows the current database');
is($node->safe_psql('postgres', q(SELECT string_agg(datname || ':' || rows, ',' ORDER BY datname) FROM onnx_stat_models(true) WHERE model = 'iris')),
	'other:1,postgres:2160', 'onnx_stat_models(true) shows every database');

# a long scoring statement is visible while it runs: progress and statistics
$node->safe_psql('postgres', q(SELECT onnx_stat_reset()));
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/started/, q(
\echo started
SELECT count(onnx_predict('cnn', array_fill((i % 7)::real, ARRAY[768]))) FROM generate_series(1, 2000000) i;
));
ok( $node->poll_query_until(
		'postgres',
		q(SELECT count(*) > 0 FROM onnx_stat_progress WHERE command = 'score' AND model = 'cnn' AND done > 0 AND unit = 'rows')),
	'onnx_stat_progress shows the rows a statement has scored');
ok( $node->poll_query_until(
		'postgres', q(SELECT coalesce(max(rows), 0) > 0 FROM onnx_stat_models WHERE model = 'cnn')),
	'statistics of a running statement are flushed while it runs');
$node->safe_psql('postgres',
	q(SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%generate_series(1, 2000000)%' AND pid <> pg_backend_pid()));
$bg->quit;
ok( $node->poll_query_until(
		'postgres', q(SELECT count(*) = 0 FROM onnx_stat_progress)),
	'the progress row goes away when the statement ends');

# progress of a load, seen from another session through a lock wait: the
# loading transaction holds the row lock of the model being replaced
my $locker = $node->background_psql('postgres');
$locker->query_safe(q(BEGIN; SELECT onnx_set_model_providers('iris', ARRAY['cpu'])));
my $loader = $node->background_psql('postgres', on_error_stop => 0);
$loader->query_until(qr/started/, qq(
\\echo started
SELECT onnx_load_model_file('iris', '$models/iris_rf.onnx', replace => true);
));
ok( $node->poll_query_until(
		'postgres',
		q(SELECT count(*) > 0 FROM onnx_stat_progress WHERE command = 'load' AND model = 'iris' AND phase = 'storing')),
	'onnx_stat_progress shows a load and its phase');
$locker->query_safe('COMMIT');
$locker->quit;
$loader->quit;

# reset
$node->safe_psql('postgres', q(SELECT onnx_stat_reset()));
is($node->safe_psql('postgres', q(SELECT count(*) FROM onnx_stat_models(true))),
	'0', 'onnx_stat_reset() forgets everything');

# the postmaster is still single-threaded after all of this
SKIP:
{
	skip 'no /proc', 1 unless -d '/proc/self/task';
	is(tasks(postmaster_pid()), 1, 'the postmaster still has one thread');
}

# statistics live in shared memory only: a restart starts afresh
$node->safe_psql('postgres', q(SELECT onnx_predict('iris', '{5.1,3.5,1.4,0.2}')));
$node->restart;
is($node->safe_psql('postgres', q(SELECT count(*) FROM onnx_stat_models)),
	'0', 'statistics start empty after a restart');

$node->stop;
done_testing();

# Leaks: one backend calling onnx_predict 1,000,000 times grows its
# resident memory (VmRSS) by less than 5 MB.  Also measured in the same
# backend: onnx_predict_batch, onnx_run, errors raised by the engine and
# caught (the guard path), and sessions rebuilt after replacements.
#
#   ONNX_PG_LEAK_CALLS  onnx_predict calls (default 1000000)
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use OnnxPgTest;

my $calls = $ENV{ONNX_PG_LEAK_CALLS} // 1_000_000;
my $limit_kb = 5 * 1024;
my $node = start_node('leaks');
$node->safe_psql('postgres', qq{
	SELECT onnx_load_model_file('logreg', '@{[model_path('logreg.onnx')]}');
	SELECT onnx_load_model_file('rf', '@{[model_path('iris_rf.onnx')]}');
	SELECT onnx_load_model_file('mlp', '@{[model_path('mlp.onnx')]}');
	CREATE FUNCTION failing_calls(n int) RETURNS int LANGUAGE plpgsql AS \$\$
	DECLARE
		failed int := 0;
	BEGIN
		FOR i IN 1 .. n LOOP
			BEGIN
				PERFORM onnx_predict('logreg', '{1,2,3}');
			EXCEPTION WHEN invalid_parameter_value THEN
				failed := failed + 1;
			END;
		END LOOP;
		RETURN failed;
	END \$\$;
});

my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# The 1,000,000-row statement is costly enough for JIT compilation with
# inlining and optimization, whose first use loads LLVM and PostgreSQL's
# bitcode (tens of MB, once per backend): do that before measuring.
$s->query_safe(q{SET jit_above_cost = 0; SET jit_inline_above_cost = 0; SET jit_optimize_above_cost = 0});
$s->query_safe(q{SELECT count(onnx_predict('logreg', ARRAY[5.1, 3.5, 1.4, i % 3]::real[])) FROM generate_series(1, 1000) i});
$s->query_safe(q{RESET jit_above_cost; RESET jit_inline_above_cost; RESET jit_optimize_above_cost});
diag 'leaks: jit = ' . $s->query_safe('SHOW jit');

# run $sql in the backend after a warm-up of $warm; returns the growth in kB
sub growth
{
	my ($what, $warm, $sql, $expect) = @_;
	$s->query_safe($warm);
	my $before = vmrss_kb($pid);
	my $start = time;
	my $out = $s->query_safe($sql);
	my $secs = time - $start;
	my $after = vmrss_kb($pid);
	is($out, $expect, "$what: ran") if defined $expect;
	my $g = $after - $before;
	diag sprintf("leaks: %s: VmRSS %d -> %d kB (%+d kB) in %.1f s", $what, $before, $after, $g, $secs);
	return $g;
}

my $g = growth("$calls x onnx_predict",
	q{SELECT count(onnx_predict('logreg', ARRAY[5.1, 3.5, 1.4, i % 3]::real[])) FROM generate_series(1, 20000) i},
	qq{SELECT count(onnx_predict('logreg', ARRAY[5.1, 3.5, 1.4, i % 3]::real[])) FROM generate_series(1, $calls) i},
	$calls);
cmp_ok($g, '<', $limit_kb, "$calls calls of onnx_predict grow the backend by less than 5 MB ($g kB)");

$g = growth('100000 x onnx_predict with a ZipMap output (random forest)',
	q{SELECT count(onnx_predict('rf', ARRAY[5.1, 3.5, i % 7, 0.2]::real[], 'output_probability')) FROM generate_series(1, 5000) i},
	q{SELECT count(onnx_predict('rf', ARRAY[5.1, 3.5, i % 7, 0.2]::real[], 'output_probability')) FROM generate_series(1, 100000) i},
	'100000');
cmp_ok($g, '<', $limit_kb, "onnx_predict on a random forest: $g kB");

$g = growth('20000 x onnx_predict_batch of 16 rows (MLP)',
	q{SELECT count(onnx_predict_batch('mlp', array_fill((i % 5)::real, ARRAY[16, 16]))) FROM generate_series(1, 1000) i},
	q{SELECT count(onnx_predict_batch('mlp', array_fill((i % 5)::real, ARRAY[16, 16]))) FROM generate_series(1, 20000) i},
	'20000');
cmp_ok($g, '<', $limit_kb, "onnx_predict_batch: $g kB");

$g = growth('50000 x onnx_run',
	q{SELECT count(onnx_run('logreg', jsonb_build_object('float_input', jsonb_build_array(jsonb_build_array(5.1, 3.5, 1.4, i % 3))))) FROM generate_series(1, 2000) i},
	q{SELECT count(onnx_run('logreg', jsonb_build_object('float_input', jsonb_build_array(jsonb_build_array(5.1, 3.5, 1.4, i % 3))))) FROM generate_series(1, 50000) i},
	'50000');
cmp_ok($g, '<', $limit_kb, "onnx_run: $g kB");

$g = growth('50000 x an engine error caught in PL/pgSQL',
	q{SELECT failing_calls(2000)},
	q{SELECT failing_calls(50000)},
	'50000');
cmp_ok($g, '<', $limit_kb, "errors: $g kB");

# sessions rebuilt: the model is replaced 300 times, each time used again
$g = growth('300 replacements (each validates, builds and frees a session) and predictions',
	qq{SELECT onnx_load_model_file('logreg', '@{[model_path('logreg.onnx')]}', replace => true), onnx_predict('logreg', '{1,2,3,4}')},
	qq{SELECT count(*) FROM generate_series(1, 300) i,
	     LATERAL (SELECT onnx_load_model_file('logreg', '@{[model_path('logreg.onnx')]}', replace => i > 0)) l,
	     LATERAL (SELECT onnx_predict('logreg', ARRAY[i, 1, 2, 3]::real[])) p},
	'300');
cmp_ok($g, '<', $limit_kb, "session rebuilds: $g kB");

$s->quit;
$node->stop;
done_testing();

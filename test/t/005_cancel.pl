# Cancellation: statement_timeout and pg_cancel_backend stop a long
# inference within 100 ms of the deadline, and the backend stays usable.
# Two heavy models (test/t/make_models.py): a chain of 2000 MatMul nodes
# (about 10 s of work), and a Loop with a trip count of 10^12.
#
# The engine polls the abort callback between nodes and inside long kernels
# (Loop iterations among them); building a session (optimizer passes, plan)
# does not poll it yet, nor do most kernels (a Pad of 17 million rows here):
# those gaps are measured and reported as TODO tests.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use OnnxPgTest;

my $tolerance = 0.100;
my $node = start_node('cancel');
my $t0 = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
$node->safe_psql('postgres', qq{
	SELECT onnx_load_model_file('heavy', '@{[model_path('heavy_matmul.onnx')]}');
	SELECT onnx_load_model_file('loop', '@{[model_path('heavy_loop.onnx')]}');
	SELECT onnx_load_model_file('logreg', '@{[model_path('logreg.onnx')]}');
	SELECT onnx_load_model_file('pad', '@{[model_path('pad_reflect.onnx')]}');
});
my $heavy_q = q{SELECT onnx_predict('heavy', array_fill(1::real, ARRAY[512]))};
my $loop_q = q{SELECT onnx_run('loop', '{"M": 1000000000000, "X": [0]}')};

my $s = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# time one statement in the session; returns (seconds, stderr)
sub timed
{
	my ($sql) = @_;
	$s->{stderr} = '';
	my $start = time;
	$s->query($sql);
	my $elapsed = time - $start;
	my $err = $s->{stderr};
	$s->{stderr} = '';
	return ($elapsed, $err);
}

# The first call builds the heavy model's session (not cancelable yet),
# then runs it: the deadline is missed by the build time.
$s->query_safe("SET statement_timeout = '100ms'");
my ($build, $build_err) = timed($heavy_q);
like($build_err, qr/canceling statement due to statement timeout/,
	'first call: canceled by statement_timeout');
TODO:
{
	local $TODO = 'session creation (optimizer passes, plan) does not poll the abort callback';
	cmp_ok($build - 0.1, '<', $tolerance,
		sprintf('a deadline during session creation is met (missed by %.0f ms)', 1000 * ($build - 0.1)));
}

# statement_timeout, with the session cached
my @overshoot;
$s->query_safe("SET statement_timeout = '1s'");
for my $case ([ 'MatMul chain', $heavy_q ], [ 'Loop of 10^12', $loop_q ])
{
	for my $try (1 .. 3)
	{
		my ($elapsed, $err) = timed($case->[1]);
		like($err, qr/canceling statement due to statement timeout/,
			"$case->[0], try $try: canceled by statement_timeout");
		my $late = $elapsed - 1.0;
		push @overshoot, $late;
		cmp_ok($late, '<', $tolerance,
			sprintf("$case->[0], try $try: stopped %.1f ms after the 1 s deadline", 1000 * $late));
		cmp_ok($late, '>', -0.01, "$case->[0], try $try: not before the deadline");
	}
}

# One long kernel: Pad (reflect) of 5 rows to 17 million (found by
# fuzz_run).  Kernels that do not poll the abort callback miss the deadline
# by their own run time.
$s->query_safe("SET statement_timeout = '100ms'");
$s->query_safe(q{SELECT onnx_run('pad', '{"X": [[1], [2]], "P": [0, 0, 0, 0]}')});
my ($pad, $pad_err) = timed(q{SELECT onnx_run('pad', '{"X": [[1], [2], [3], [4], [5]], "P": [17003008, 0, 0, 0]}')});
like($pad_err, qr/canceling statement due to statement timeout/, 'Pad of 17 million rows: canceled');
TODO:
{
	local $TODO = 'most kernels (Pad here) do not poll the abort callback';
	cmp_ok($pad - 0.1, '<', $tolerance,
		sprintf('Pad of 17 million rows: stopped %.0f ms after the deadline', 1000 * ($pad - 0.1)));
}
$s->query_safe('RESET statement_timeout');

# pg_cancel_backend from another session
my $c = $node->background_psql('postgres');
for my $case ([ 'MatMul chain', $heavy_q ], [ 'Loop of 10^12', $loop_q ])
{
	for my $try (1 .. 3)
	{
		$s->{stderr} = '';
		$s->query_until(qr/started/, "\\echo started\n$case->[1];\n");
		sleep(0.5);
		is($c->query_safe(
				"SELECT state FROM pg_stat_activity WHERE pid = $pid"),
			'active', "$case->[0], try $try: the inference is running");
		my $start = time;
		$c->query_safe("SELECT pg_cancel_backend($pid)");
		my $alive = $s->query('SELECT 42');
		my $late = time - $start;
		push @overshoot, $late;
		like($s->{stderr}, qr/canceling statement due to user request/,
			"$case->[0], try $try: canceled by pg_cancel_backend");
		is($alive, '42', "$case->[0], try $try: the backend answers the next query");
		cmp_ok($late, '<', $tolerance,
			sprintf("$case->[0], try $try: stopped %.1f ms after pg_cancel_backend", 1000 * $late));
	}
}
$c->quit;
$s->{stderr} = '';

# the backend stays usable: same process, models still work
is($s->query_safe('SELECT pg_backend_pid()'), $pid, 'the same backend served every query');
is($s->query_safe(q{SELECT onnx_predict('logreg', '{5.1,3.5,1.4,0.2}')}), '{0}',
	'another model predicts in that backend');
is($s->query_safe(q{SELECT onnx_run('loop', '{"M": 1000, "X": [0]}')}), '{"Y": [1000]}',
	'the interrupted Loop model runs to completion when it is short');
$s->quit;
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $t0, 'the server never restarted');

my ($max) = sort { $b <=> $a } @overshoot;
diag sprintf(
	"cancellation: %d cancels (statement_timeout and pg_cancel_backend, MatMul chain and Loop), latest %.1f ms after the deadline; session creation missed it by %.0f ms, one Pad kernel by %.0f ms",
	scalar(@overshoot), 1000 * $max, 1000 * ($build - 0.1), 1000 * ($pad - 0.1));
$node->stop;
done_testing();

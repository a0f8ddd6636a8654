# Cancellation: statement_timeout and pg_cancel_backend stop a long
# inference within 100 ms of the deadline, and the backend stays usable.
# Heavy models (test/t/make_models.py): a chain of 2000 MatMul nodes (about
# 10 s of work, and seconds of session creation: weight packing), a Loop
# with a trip count of 10^12, and one long kernel each (a Pad of 17 million
# rows, and the big_*.onnx models: ConstantOfShape, Range, Expand, Tile,
# Gather, Concat, Resize, Add, MatMul, Softmax, Transpose and fused attention of hundreds of
# millions of elements asked for by a two-number input).
#
# The engine polls the abort callback between nodes, between optimizer
# passes and kernel preparations while it builds a session, between the
# chunks of every parallel loop, and inside long serial kernels
# (test/unit/test_cancel.c cancels each of these models at every poll).
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

# The first call builds the heavy model's session (seconds: 2000 weight
# packings): the deadline falls during session creation.  (The backend
# loads the library first: one small prediction, not measured.)
is($s->query_safe(q{SELECT onnx_predict('logreg', '{5.1,3.5,1.4,0.2}')}), '{0}', 'library loaded');
$s->query_safe("SET statement_timeout = '100ms'");
my ($build, $build_err) = timed($heavy_q);
like($build_err, qr/canceling statement due to statement timeout/,
	'first call: canceled by statement_timeout');
cmp_ok($build - 0.1, '<', $tolerance,
	sprintf('a deadline during session creation is met (%.1f ms after it)', 1000 * ($build - 0.1)));
my @overshoot = ($build - 0.1);

# statement_timeout, with the session cached: build it first (seconds; a
# call that ends with a cancel of the run leaves it cached)
$s->query_safe("SET statement_timeout = '20s'");
timed($heavy_q);
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
# fuzz_run).
$s->query_safe("SET statement_timeout = '100ms'");
$s->query_safe(q{SELECT onnx_run('pad', '{"X": [[1], [2]], "P": [0, 0, 0, 0]}')});
my ($pad, $pad_err) = timed(q{SELECT onnx_run('pad', '{"X": [[1], [2], [3], [4], [5]], "P": [17003008, 0, 0, 0]}')});
like($pad_err, qr/canceling statement due to statement timeout/, 'Pad of 17 million rows: canceled');
cmp_ok($pad - 0.1, '<', $tolerance,
	sprintf('Pad of 17 million rows: stopped %.1f ms after the deadline', 1000 * ($pad - 0.1)));
push @overshoot, $pad - 0.1;

# One long kernel per model, sized by S: [2, 3] runs at once (the result
# is known), the big S asks for 400 million elements (1.6 GB, of which the
# run touches what it computes before the cancel) or, for MatMul, 10^11
# multiply-adds.  The tensors may exceed the default onnx.max_run_memory,
# which is not what is measured here.
$s->query_safe('SET onnx.max_run_memory = -1');
my @kernels = (
	[ 'constant', 6, '20000, 20000' ], [ 'range', 15, '20000, 20000' ],
	[ 'expand', 6, '20000, 20000' ], [ 'tile', 6, '20000, 20000' ],
	[ 'gather', 6, '20000, 20000' ], [ 'concat', 12, '20000, 10000' ],
	[ 'resize', 6, '20000, 20000' ], [ 'add', 12, '20000, 20000' ],
	[ 'matmul', 18, '6000, 4000' ], [ 'softmax', 2, '20000, 20000' ],
	[ 'transpose', 6, '20000, 20000' ], [ 'attention', 6, '30000, 256' ]);
my %kernel_late;
for my $k (@kernels)
{
	my ($op, $small, $big) = @$k;
	my $q = "SELECT onnx_run('big_$op', '{\"S\": [%s]}')";
	my $file = model_path("big_$op.onnx");
	$node->safe_psql('postgres', "SELECT onnx_load_model_file('big_$op', '$file')");
	like($s->query_safe(sprintf($q, '2, 3')), qr/"Y": \[?$small\]?\}/, "$op: S = [2, 3] gives $small");
	my ($t, $err) = timed(sprintf($q, $big));
	like($err, qr/canceling statement due to statement timeout/, "$op: S = [$big] canceled");
	cmp_ok($t - 0.1, '<', $tolerance,
		sprintf("$op: S = [$big] stopped %.1f ms after the deadline", 1000 * ($t - 0.1)));
	$kernel_late{$op} = $t - 0.1;
	push @overshoot, $t - 0.1;
	like($s->query_safe(sprintf($q, '2, 3')), qr/"Y": \[?$small\]?\}/, "$op: S = [2, 3] again after the cancel");
}
# The same on two threads: a parallel loop's workers stop too.  Fused
# attention gives each thread a slot of tasks (one packed K' for many query
# rows): before workers saw the cancel, the worker's slot ran to its end,
# 12 s after the deadline.  The big S comes first in the new session (a
# new thread count builds one): a short run of an input shape makes the
# session run that shape on one thread (session.c, run_plan_timed), and
# S = [2, 3] has the big S's shape.
$s->query_safe('SET onnx.intra_op_threads = 2');
for my $k (grep { $_->[0] eq 'attention' || $_->[0] eq 'matmul' } @kernels)
{
	my ($op, $small, $big) = @$k;
	my $q = "SELECT onnx_run('big_$op', '{\"S\": [%s]}')";
	my ($t, $err) = timed(sprintf($q, $big));
	like($err, qr/canceling statement due to statement timeout/, "$op, 2 threads: S = [$big] canceled");
	cmp_ok($t - 0.1, '<', $tolerance,
		sprintf("$op, 2 threads: S = [$big] stopped %.1f ms after the deadline", 1000 * ($t - 0.1)));
	$kernel_late{"$op/2"} = $t - 0.1;
	push @overshoot, $t - 0.1;
	like($s->query_safe(sprintf($q, '2, 3')), qr/"Y": \[?$small\]?\}/, "$op, 2 threads: S = [2, 3] gives $small");
}
$s->query_safe('RESET onnx.intra_op_threads');
$s->query_safe('RESET onnx.max_run_memory');
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
	"cancellation: %d cancels (statement_timeout and pg_cancel_backend; session creation, MatMul chain, Loop, Pad and %d single kernels, two of them also on 2 threads), latest %.1f ms after the deadline; session creation %.1f ms, Pad %.1f ms, kernels: %s",
	scalar(@overshoot), scalar(@kernels), 1000 * $max, 1000 * ($build - 0.1), 1000 * ($pad - 0.1),
	join(', ', map { sprintf('%s %.1f', $_, 1000 * $kernel_late{$_}) } (map { $_->[0] } @kernels), 'attention/2', 'matmul/2'));
$node->stop;
done_testing();

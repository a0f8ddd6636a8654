# Streaming replication: a model loaded on the primary predicts identically
# on a hot standby; a replacement (and a drop) on the primary is seen there,
# also by a standby session that had the old version cached; inference on
# the standby writes nothing (it runs in recovery), and loading there is
# refused as a write.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use OnnxPgTest;

my $primary = start_node('primary', allows_streaming => 1);
my $file_a = model_path('logreg.onnx');
my $file_b = model_path('logreg_v2.onnx');
my $iris = iris_features();

$primary->safe_psql('postgres', qq{
	SELECT onnx_load_model_file('m', '$file_a');
	SELECT onnx_load_model_file('rf', '@{[model_path('iris_rf.onnx')]}');
	CREATE TABLE iris (id int PRIMARY KEY, f real[]);
});
$primary->safe_psql('postgres',
	'INSERT INTO iris VALUES '
	  . join(', ', map { "($_, '$iris->{$_}')" } sort { $a <=> $b } keys %$iris));

$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

my $q = q{SELECT id, onnx_predict('m', f, 'output_probability'), onnx_predict('m', f),
                 onnx_predict('rf', f, 'output_probability') FROM iris ORDER BY id};
my $on_primary = $primary->safe_psql('postgres', $q);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
is($standby->safe_psql('postgres', $q), $on_primary,
	'the standby predicts identically (150 rows, 2 models)');

# inference on the standby works although it may write nothing (a hot
# standby refuses every write, see below), also inside an explicit
# read-only transaction
is($standby->safe_psql('postgres',
		"BEGIN TRANSACTION READ ONLY; SELECT count(*) FROM ($q) s; COMMIT;"),
	'150', 'inference on the standby runs in a read-only transaction');
my ($rc, $out, $err) = $standby->psql('postgres', "SELECT onnx_load_model_file('x', '$file_a')");
isnt($rc, 0, 'loading a model on the standby fails');
like($err, qr/read-only transaction|recovery/, '... as a write in a read-only server');

# a long-lived standby session caches the session of model m
my $session = $standby->background_psql('postgres', on_error_stop => 0);
my $before = $session->query_safe(
	"SELECT onnx_predict('m', f, 'output_probability') FROM iris WHERE id = 101");

$primary->safe_psql('postgres', "SELECT onnx_load_model_file('m', '$file_b', replace => true)");
$primary->wait_for_catchup($standby);
my $new_on_primary = $primary->safe_psql('postgres', $q);
isnt($new_on_primary, $on_primary, 'the replacement changes the predictions');
is($standby->safe_psql('postgres', $q), $new_on_primary,
	'a new standby connection predicts with the replacement');
my $after = $session->query_safe(
	"SELECT onnx_predict('m', f, 'output_probability') FROM iris WHERE id = 101");
is($after,
	$primary->safe_psql('postgres',
		"SELECT onnx_predict('m', f, 'output_probability') FROM iris WHERE id = 101"),
	'the standby session that had the old version cached sees the replacement');
isnt($after, $before, '... which differs from what it predicted before');

$primary->safe_psql('postgres', "SELECT onnx_drop_model('rf')");
$primary->wait_for_catchup($standby);
my ($out2, $ret) = $session->query("SELECT onnx_predict('rf', '{5.1,3.5,1.4,0.2}')");
like($session->{stderr}, qr/model "rf" does not exist/, 'a drop on the primary is seen by the standby session');
$session->quit;

diag "replication: 150 rows x 2 models identical on the hot standby; replacement and drop seen there, also by a session with the model cached";
$standby->stop;
$primary->stop;
done_testing();

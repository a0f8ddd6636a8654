# Inference on a streaming replica (docs/scale-out.md): models loaded on the
# primary reach the standby, a replacement is seen by a standby backend that
# already has the old session cached, writes fail there, and statistics are
# the standby's own.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $models = $ENV{ONNX_PG_MODELS}
  or plan skip_all => 'ONNX_PG_MODELS is not set (scripts/test.sh sets it)';

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq(
shared_preload_libraries = 'onnx_pg'
jit = off
));
$primary->start;
$primary->safe_psql('postgres', qq(
CREATE EXTENSION onnx_pg;
SELECT onnx_load_model_file('m', '$models/iris_rf.onnx');
));

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

is($standby->safe_psql('postgres', q(SELECT onnx_predict('m', '{6.7,3.0,5.2,2.3}'))),
	'{2}', 'the standby runs a model loaded on the primary');

# a standby backend with the session cached
my $bg = $standby->background_psql('postgres');
is($bg->query_safe(q(SELECT onnx_predict('m', '{6.7,3.0,5.2,2.3}'))), '{2}',
	'a standby backend caches the session');

# replace the model on the primary with another one (mlp: 16 features)
$primary->safe_psql('postgres',
	qq(SELECT onnx_load_model_file('m', '$models/mlp.onnx', replace => true)));
$primary->wait_for_catchup($standby);
is($bg->query_safe(q(SELECT array_length(onnx_predict('m', array_fill(0.5::real, ARRAY[16])), 1))),
	'3', 'the same standby backend sees the replacement at its next call');
is($bg->query_safe(q(SELECT version FROM onnx_cache_stats() WHERE model = 'm')),
	'2', 'and rebuilt its session for version 2');
$bg->quit;

# writes belong to the primary
my ($rc, $out, $err) = $standby->psql('postgres',
	qq(SELECT onnx_load_model_file('n', '$models/iris_rf.onnx')));
isnt($rc, 0, 'loading a model on the standby fails');
like($err, qr/read-only transaction/, '... because the standby is read-only');

# statistics are per server
$standby->safe_psql('postgres', q(SELECT count(onnx_predict('m', array_fill(0.5::real, ARRAY[16]))) FROM generate_series(1, 40)));
my $rows = $standby->safe_psql('postgres', q(SELECT rows FROM onnx_stat_models WHERE model = 'm'));
ok($rows >= 42, "the standby counts its own rows ($rows)");
is($primary->safe_psql('postgres', q(SELECT coalesce(sum(rows), 0) FROM onnx_stat_models WHERE model = 'm')),
	'0', 'the primary does not see them');

$standby->stop;
$primary->stop;
done_testing();

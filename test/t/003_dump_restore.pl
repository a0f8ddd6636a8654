# pg_dump and pg_restore into a fresh database: the models come back
# byte-identical (sha256), with their metadata, and predict identically.
# Both the custom format (pg_restore) and the plain format (psql) are
# checked.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use OnnxPgTest;

my $node = start_node('dump');
my $dir = $node->basedir;
my $big = padded_model(model_path('logreg.onnx'), 5_000_000, "$dir/big.onnx");
my %models = (
	'iris_rf' => model_path('iris_rf.onnx'),
	'logreg' => model_path('logreg.onnx'),
	'mlp' => model_path('mlp.onnx'),
	'small_cnn' => model_path('small_cnn.onnx'),
	'big (5 MB)' => $big,
	qq{it's "odd"; name} => model_path('logreg_v2.onnx'));

for my $name (sort keys %models)
{
	(my $q = $name) =~ s/'/''/g;
	$node->safe_psql('postgres', "SELECT onnx_load_model_file('$q', '$models{$name}')");
}
# a replaced model (version 2) and a provider override travel too
$node->safe_psql('postgres', qq{
	SELECT onnx_load_model_file('logreg', '$models{logreg}', replace => true);
	SELECT onnx_set_model_providers('mlp', ARRAY['cpu']);
	CREATE TABLE samples AS
	  SELECT i, ARRAY[4 + i % 4, 2 + i % 3, 1 + i % 6, i % 3]::real[] AS iris,
	         array_fill((i % 7)::real / 7, ARRAY[16]) AS mlp
	    FROM generate_series(1, 200) i;
});

# what must come back
my $catalog_q = q{
	SELECT name, version, size_bytes, sha256, encode(sha256(onnx_export_model(name)), 'hex'),
	       ir_version, opsets, producer, owner, providers, created_at, updated_at, metadata
	  FROM onnx_models ORDER BY name};
my $predict_q = q{
	SELECT i, onnx_predict('iris_rf', iris, 'output_probability'),
	       onnx_predict('logreg', iris, 'output_probability'),
	       onnx_predict('it''s "odd"; name', iris, 'output_probability'),
	       onnx_predict('big (5 MB)', iris, 'output_probability'),
	       onnx_predict('mlp', mlp)
	  FROM samples ORDER BY i};
my $catalog = $node->safe_psql('postgres', $catalog_q);
my $predictions = $node->safe_psql('postgres', $predict_q);

# every stored file is byte-identical to the one loaded
for my $name (sort keys %models)
{
	(my $q = $name) =~ s/'/''/g;
	is($node->safe_psql('postgres', "SELECT sha256 FROM onnx_models WHERE name = '$q'"),
		file_sha256($models{$name}), "stored bytes of \"$name\" match the file");
}

# custom format through pg_restore
$node->command_ok(['pg_dump', '-Fc', '-f', "$dir/dump.custom", '-d', $node->connstr('postgres')],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(
	['pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), "$dir/dump.custom"],
	'pg_restore into a fresh database');
is($node->safe_psql('restored', $catalog_q), $catalog,
	'pg_restore: catalog identical (names, versions, sha256 of the bytes, metadata)');
is($node->safe_psql('restored', $predict_q), $predictions,
	'pg_restore: predictions identical on 200 samples for 5 models');
is($node->safe_psql('restored', 'SELECT count(*) FROM onnx_models'),
	scalar(keys %models), 'pg_restore: no model lost or added');

# plain format through psql
$node->command_ok(['pg_dump', '-Fp', '-f', "$dir/dump.sql", '-d', $node->connstr('postgres')],
	'pg_dump -Fp');
$node->safe_psql('postgres', 'CREATE DATABASE restored_plain');
$node->command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored_plain'),
		'-f', "$dir/dump.sql"
	],
	'plain dump restored with psql');
is($node->safe_psql('restored_plain', $catalog_q), $catalog, 'plain dump: catalog identical');
is($node->safe_psql('restored_plain', $predict_q), $predictions, 'plain dump: predictions identical');

# the restored catalog is live: replacing works and is seen
$node->safe_psql('restored',
	"SELECT onnx_load_model_file('logreg', '$models{q{it's \"odd\"; name}}', replace => true)");
is($node->safe_psql('restored', q{
	SELECT onnx_predict('logreg', '{5.9,3.0,5.1,1.8}', 'output_probability')
	     = onnx_predict('it''s "odd"; name', '{5.9,3.0,5.1,1.8}', 'output_probability')}),
	't', 'a restored model can be replaced');
is($node->safe_psql('restored', "SELECT version FROM onnx_models WHERE name = 'logreg'"),
	'3', 'its version counter continues');

diag "dump/restore: " . scalar(keys %models) . " models (up to 5 MB) byte-identical after pg_dump -Fc/pg_restore and -Fp/psql, 200 x 5 predictions identical";
$node->stop;
done_testing();

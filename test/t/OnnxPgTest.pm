# Shared helpers of the onnx_pg TAP tests (test/t/*.pl).
#
# scripts/test.sh runs the tests as the postgres user from a copy of test/
# (TESTDIR), with PG_REGRESS, ONNX_PG_ROOT and ONNX_PG_MODELS set; see
# run_tap there.  To run one test by hand, as a user that may run initdb:
#
#   cd test/.. && TESTDIR=$PWD PG_REGRESS=.../pg_regress \
#     prove -v -I /usr/lib/postgresql/15/lib/pgxs/src/test/perl -I test/t test/t/001_concurrent_replace.pl
package OnnxPgTest;

use strict;
use warnings;

use Cwd qw(abs_path);
use Digest::SHA qw(sha256_hex);
use File::Basename qw(dirname);
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT =
  qw(models_dir data_dir model_path start_node read_file_bytes write_file_bytes file_sha256 vmrss_kb padded_model iris_features);

# test/models (fixtures) and test/t/data (TAP fixtures, test/t/make_models.py)
sub models_dir
{
	return $ENV{ONNX_PG_MODELS} // abs_path(dirname(__FILE__) . '/../models');
}

sub data_dir
{
	return abs_path(dirname(__FILE__) . '/data');
}

sub model_path
{
	my ($name) = @_;
	my $p = models_dir() . "/$name";
	$p = data_dir() . "/$name" unless -e $p;
	die "no fixture model $name" unless -e $p;
	return $p;
}

# A started node with onnx_pg created in its postgres database.
# $ENV{ONNX_PG_TAP_CONF}: extra postgresql.conf lines for every node.
sub start_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(
		allows_streaming => $opts{allows_streaming} // 0);
	$node->append_conf('postgresql.conf',
		"max_connections = " . ($opts{max_connections} // 40) . "\n" .
		($opts{conf} // '') . "\n" . ($ENV{ONNX_PG_TAP_CONF} // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION onnx_pg');
	return $node;
}

sub read_file_bytes
{
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or die "could not read $path: $!";
	local $/;
	my $b = <$fh>;
	close $fh;
	return $b;
}

sub write_file_bytes
{
	my ($path, $bytes) = @_;
	open(my $fh, '>:raw', $path) or die "could not write $path: $!";
	print $fh $bytes;
	close $fh;
	return $path;
}

sub file_sha256
{
	return sha256_hex(read_file_bytes($_[0]));
}

# the model of $path with a doc_string of $pad bytes appended (ModelProto
# field 6: protobuf merges late fields), written to $out: a bigger model
# that predicts exactly like the original
sub padded_model
{
	my ($path, $pad, $out, $fill) = @_;
	my $n = $pad;
	my $varint = '';
	while (1)
	{
		my $b = $n & 0x7f;
		$n >>= 7;
		if ($n) { $varint .= chr($b | 0x80); }
		else { $varint .= chr($b); last; }
	}
	return write_file_bytes($out,
		read_file_bytes($path) . "\x32" . $varint . (($fill // 'x') x $pad));
}

# resident memory of a process, in kB
sub vmrss_kb
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/status") or die "no process $pid: $!";
	while (<$fh>)
	{
		return $1 if /^VmRSS:\s+(\d+)\s+kB/;
	}
	die "no VmRSS for $pid";
}

# the iris rows of test/models/iris.csv as SQL real[] literals, by id
sub iris_features
{
	my %rows;
	open(my $fh, '<', models_dir() . '/iris.csv') or die "iris.csv: $!";
	my $head = <$fh>;
	while (<$fh>)
	{
		chomp;
		my @f = split /,/;
		next unless @f >= 5 && $f[0] =~ /^\d+$/;
		$rows{ $f[0] } = "{$f[1],$f[2],$f[3],$f[4]}";
	}
	close $fh;
	return \%rows;
}

1;

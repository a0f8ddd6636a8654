"""Shared fixtures for the onnx_pg end-to-end tests.

The tests talk to a live PostgreSQL server with onnx_pg installed.  The
connection comes from the usual libpq environment: PGHOST, PGPORT, PGUSER,
PGDATABASE (scripts/test.sh sets them for its throwaway cluster).
"""
import os

import psycopg
import pytest

MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")


def connect():
    """A new autocommit connection with the extension's schema on search_path."""
    try:
        conn = psycopg.connect("", autocommit=True)
    except psycopg.OperationalError as e:
        pytest.fail("cannot connect to PostgreSQL (set PGHOST/PGPORT/PGUSER/PGDATABASE): %s" % e,
                    pytrace=False)
    try:
        setup(conn)
    except psycopg.Error as e:
        conn.close()
        pytest.fail("cannot set up onnx_pg (CREATE EXTENSION onnx_pg): %s" % e, pytrace=False)
    return conn


def setup(conn):
    with conn.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS onnx_pg")
        cur.execute(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'onnx_pg'"
        )
        schema = cur.fetchone()[0]
        cur.execute("SELECT set_config('search_path', 'public, ' || quote_ident(%s), false)", (schema,))


@pytest.fixture(scope="session")
def conn():
    c = connect()
    yield c
    c.close()


@pytest.fixture
def new_conn():
    """Factory for extra connections, closed at the end of the test."""
    made = []

    def make():
        c = connect()
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()

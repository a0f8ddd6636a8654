/*
 * test_text.c
 *	  Unit tests of the text family: StringNormalizer, StringSplit,
 *	  StringConcat, RegexFullMatch, TfIdfVectorizer.  The gen_* cases were
 *	  generated with onnx.reference (Python re for RegexFullMatch) or, for
 *	  StringNormalizer and TfIdfVectorizer, onnxruntime; the rest are
 *	  written by hand: edge cases and errors.
 */
#include "kernel_test.h"
#include "kernels/cpu/text.h"

/* compare string output i with want */
static void
expect_strings(int i, int rank, const int64_t *dims, const char **want)
{
	const ox_string *s;

	if (!kt_check_shape(i, OX_STRING, rank, dims))
		return;
	s = kt_output(i)->data;
	for (int64_t k = 0; k < ox_shape_numel(rank, dims); k++)
	{
		const char *got = s[k].data ? s[k].data : "";

		if (strlen(want[k]) != s[k].len || memcmp(got, want[k], s[k].len) != 0)
		{
			kt_fail("string \"%s\" at %g differs%g", got, (double) k, 0);
			return;
		}
	}
}

static void
gen_1(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer NONE case_sensitive=0";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_string("case_change_action", "NONE");
	kt_attr_int("is_case_sensitive", 0);
	kt_attr_strings("stopwords", 2, (const char *[]) {"monday", "wed nesday"});
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday", "monday"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 1, (const int64_t[]) {1}, (const char *[]) {"tuesday"});
	kt_end();
}

static void
gen_2(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer NONE case_sensitive=1";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_string("case_change_action", "NONE");
	kt_attr_int("is_case_sensitive", 1);
	kt_attr_strings("stopwords", 2, (const char *[]) {"monday", "wed nesday"});
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday", "monday"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 1, (const int64_t[]) {4}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday"});
	kt_end();
}

static void
gen_3(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer LOWER case_sensitive=0";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_string("case_change_action", "LOWER");
	kt_attr_int("is_case_sensitive", 0);
	kt_attr_strings("stopwords", 2, (const char *[]) {"monday", "wed nesday"});
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday", "monday"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 1, (const int64_t[]) {1}, (const char *[]) {"tuesday"});
	kt_end();
}

static void
gen_4(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer LOWER case_sensitive=1";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_string("case_change_action", "LOWER");
	kt_attr_int("is_case_sensitive", 1);
	kt_attr_strings("stopwords", 2, (const char *[]) {"monday", "wed nesday"});
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday", "monday"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 1, (const int64_t[]) {4}, (const char *[]) {"monday", "tuesday", "monday", "wed nesday"});
	kt_end();
}

static void
gen_5(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer UPPER case_sensitive=0";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_string("case_change_action", "UPPER");
	kt_attr_int("is_case_sensitive", 0);
	kt_attr_strings("stopwords", 2, (const char *[]) {"monday", "wed nesday"});
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday", "monday"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 1, (const int64_t[]) {1}, (const char *[]) {"TUESDAY"});
	kt_end();
}

static void
gen_6(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer UPPER case_sensitive=1";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_string("case_change_action", "UPPER");
	kt_attr_int("is_case_sensitive", 1);
	kt_attr_strings("stopwords", 2, (const char *[]) {"monday", "wed nesday"});
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday", "monday"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 1, (const int64_t[]) {4}, (const char *[]) {"MONDAY", "TUESDAY", "MONDAY", "WED NESDAY"});
	kt_end();
}

static void
gen_7(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer [1, C] no stopwords";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_string("case_change_action", "LOWER");
	kt_input_strings(2, (const int64_t[]) {1, 5}, (const char *[]) {"Monday", "tuesday", "MONDAY", "Wed nesday", "monday"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {1, 5}, (const char *[]) {"monday", "tuesday", "monday", "wed nesday", "monday"});
	kt_end();
}

static void
gen_8(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer [1, C] all dropped";
	kt_attr_string("locale", "C.UTF-8");
	kt_attr_strings("stopwords", 2, (const char *[]) {"a", "b"});
	kt_input_strings(2, (const int64_t[]) {1, 2}, (const char *[]) {"A", "b"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {1, 1}, (const char *[]) {""});
	kt_end();
}

static void
gen_9(void)
{
	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit comma";
	kt_attr_string("delimiter", ",");
	kt_input_strings(1, (const int64_t[]) {6}, (const char *[]) {"a,b,,c", "", ",lead", "trail,", "none", ",,"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {6, 4}, (const char *[]) {"a", "b", "", "c", "", "", "", "", "", "lead", "", "", "trail", "", "", "", "none", "", "", "", "", "", "", ""});
	kt_expect_values(1, OX_INT64, 1, (const int64_t[]) {6}, (const int64_t[]) {4, 1, 2, 2, 1, 3}, 0.0001);
	kt_end();
}

static void
gen_10(void)
{
	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit comma maxsplit 1, 2-D";
	kt_attr_string("delimiter", ",");
	kt_attr_int("maxsplit", 1);
	kt_input_strings(2, (const int64_t[]) {2, 3}, (const char *[]) {"a,b,,c", "", ",lead", "trail,", "none", ",,"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_ok();
	expect_strings(0, 3, (const int64_t[]) {2, 3, 2}, (const char *[]) {"a", "b,,c", "", "", "", "lead", "trail", "", "none", "", "", ","});
	kt_expect_values(1, OX_INT64, 2, (const int64_t[]) {2, 3}, (const int64_t[]) {2, 1, 2, 2, 1, 2}, 0.0001);
	kt_end();
}

static void
gen_11(void)
{
	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit multi-byte delimiter";
	kt_attr_string("delimiter", "::");
	kt_input_strings(1, (const int64_t[]) {3}, (const char *[]) {"a::b:::c", "::", "x"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {3, 3}, (const char *[]) {"a", "b", ":c", "", "", "", "x", "", ""});
	kt_expect_values(1, OX_INT64, 1, (const int64_t[]) {3}, (const int64_t[]) {3, 2, 1}, 0.0001);
	kt_end();
}

static void
gen_12(void)
{
	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit whitespace";
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"  hello   big\011world  ", "", "   ", "one", "\012a \013b\015c "});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {5, 3}, (const char *[]) {"hello", "big", "world", "", "", "", "", "", "", "one", "", "", "a", "b", "c"});
	kt_expect_values(1, OX_INT64, 1, (const int64_t[]) {5}, (const int64_t[]) {3, 0, 0, 1, 3}, 0.0001);
	kt_end();
}

static void
gen_13(void)
{
	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit whitespace maxsplit 1";
	kt_attr_int("maxsplit", 1);
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"  hello   big\011world  ", "", "   ", "one", "\012a \013b\015c "});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {5, 2}, (const char *[]) {"hello", "big\011world  ", "", "", "", "", "one", "", "a", "b\015c "});
	kt_expect_values(1, OX_INT64, 1, (const int64_t[]) {5}, (const int64_t[]) {2, 0, 0, 1, 2}, 0.0001);
	kt_end();
}

static void
gen_14(void)
{
	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit whitespace maxsplit 0";
	kt_attr_int("maxsplit", 0);
	kt_input_strings(1, (const int64_t[]) {5}, (const char *[]) {"  hello   big\011world  ", "", "   ", "one", "\012a \013b\015c "});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {5, 1}, (const char *[]) {"hello   big\011world  ", "", "", "one", "a \013b\015c "});
	kt_expect_values(1, OX_INT64, 1, (const int64_t[]) {5}, (const int64_t[]) {1, 0, 0, 1, 1}, 0.0001);
	kt_end();
}

static void
gen_15(void)
{
	kt_begin("StringConcat", "", 20);
	kt.label = "StringConcat broadcast [3,1]+[2]";
	kt_input_strings(2, (const int64_t[]) {3, 1}, (const char *[]) {"a", "bc", ""});
	kt_input_strings(1, (const int64_t[]) {2}, (const char *[]) {"x", "yz"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 2, (const int64_t[]) {3, 2}, (const char *[]) {"ax", "ayz", "bcx", "bcyz", "x", "yz"});
	kt_end();
}

static void
gen_16(void)
{
	kt_begin("StringConcat", "", 20);
	kt.label = "StringConcat utf8 rank 1 + rank 3";
	kt_input_strings(1, (const int64_t[]) {1}, (const char *[]) {"\303\251t\303\251"});
	kt_input_strings(3, (const int64_t[]) {3, 1, 1}, (const char *[]) {"!", "?", "\342\230\272"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	expect_strings(0, 3, (const int64_t[]) {3, 1, 1}, (const char *[]) {"\303\251t\303\251!", "\303\251t\303\251?", "\303\251t\303\251\342\230\272"});
	kt_end();
}

static void
gen_17(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch /w+";
	kt_attr_string("pattern", "\\w+");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {true, true, false, false, false, true, false, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_18(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch [a-z]+/d*";
	kt_attr_string("pattern", "[a-z]+\\d*");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {true, false, false, false, false, true, false, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_19(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch /d{4}-/d{2}-/d{2}";
	kt_attr_string("pattern", "\\d{4}-\\d{2}-\\d{2}");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, true, false, false, false, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_20(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch [/w./-]+@[/w-]+/.(?:org|com)";
	kt_attr_string("pattern", "[\\w.\\-]+@[\\w-]+\\.(?:org|com)");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, true, false, false, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_21(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch .*?o.*";
	kt_attr_string("pattern", ".*?o.*");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, true, false, false, false,
		false, false, true}, 0.0001);
	kt_end();
}

static void
gen_22(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch (?P<x>a)[/]_-]b.*";
	kt_attr_string("pattern", "(?P<x>a)[\\]_-]b.*");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, true, false, false, false, false, true,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_23(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch [^/d]*";
	kt_attr_string("pattern", "[^\\d]*");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, true, true, false, true, true, true, true,
		true, true, true}, 0.0001);
	kt_end();
}

static void
gen_24(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch /S+/s/S+";
	kt_attr_string("pattern", "\\S+\\s\\S+");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, false, false, false, false,
		true, false, true}, 0.0001);
	kt_end();
}

static void
gen_25(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch tab/t/w+";
	kt_attr_string("pattern", "tab\\t\\w+");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, false, false, false, false,
		true, false, false}, 0.0001);
	kt_end();
}

static void
gen_26(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch a/^b|x";
	kt_attr_string("pattern", "a\\^b|x");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, false, true, false, false,
		false, true, false}, 0.0001);
	kt_end();
}

static void
gen_27(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch [/^a]+b";
	kt_attr_string("pattern", "[\\^a]+b");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, false, false, false, false,
		false, true, false}, 0.0001);
	kt_end();
}

static void
gen_28(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch /AABC";
	kt_attr_string("pattern", "\\AABC");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, true, false, false, false, false, false, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_29(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch /bhello/b.*";
	kt_attr_string("pattern", "\\bhello\\b.*");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, false, false, false, false,
		false, false, true}, 0.0001);
	kt_end();
}

static void
gen_30(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch (ab|abc)(123)?";
	kt_attr_string("pattern", "(ab|abc)(123)?");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {true, false, false, false, false, false, false, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_31(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch ";
	kt_attr_string("pattern", "");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, false, false, true, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_32(void)
{
	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch x?";
	kt_attr_string("pattern", "x?");
	kt_input_strings(1, (const int64_t[]) {11}, (const char *[]) {"abc123", "ABC", "a_b-c", "2024-01-31", "foo.bar@x.org", "x", "", "a]b", "tab\011here", "a^b", "hello world"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_BOOL, 1, (const int64_t[]) {11}, (const bool[]) {false, false, false, false, false, true, true, false,
		false, false, false}, 0.0001);
	kt_end();
}

static void
gen_33(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int TF skip 0";
	kt_attr_string("mode", "TF");
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 12}, (const int32_t[]) {1, 1, 3, 3, 3, 7, 8, 6,
		7, 5, 6, 8, 2, 3, 5, 4,
		5, 6, 7, 8, 6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {3.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.0f,
		1.0f, 2.0f, 1.0f, 3.0f, 1.0f, 2.0f, 1.0f, 1.0f}, 0.0001);
	kt_end();
}

static void
gen_34(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int TF skip 2";
	kt_attr_string("mode", "TF");
	kt_attr_int("max_skip_count", 2);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 12}, (const int32_t[]) {1, 1, 3, 3, 3, 7, 8, 6,
		7, 5, 6, 8, 2, 3, 5, 4,
		5, 6, 7, 8, 6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {3.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 2.0f, 0.0f,
		1.0f, 2.0f, 1.0f, 3.0f, 2.0f, 2.0f, 1.0f, 1.0f}, 0.0001);
	kt_end();
}

static void
gen_35(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int TF weights 1-D";
	kt_attr_string("mode", "TF");
	kt_attr_int("max_skip_count", 1);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_floats("weights", 8, (const float[]) {0.5f, 1.5f, 2.0f, 0.25f, 3.0f, 1.0f, 0.1f, 4.0f});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT64, 1, (const int64_t[]) {12}, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8,
		6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 1, (const int64_t[]) {8}, (const float[]) {1.0f, 2.0f, 1.0f, 3.0f, 1.0f, 2.0f, 1.0f, 1.0f}, 0.0001);
	kt_end();
}

static void
gen_36(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int IDF skip 0";
	kt_attr_string("mode", "IDF");
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 12}, (const int32_t[]) {1, 1, 3, 3, 3, 7, 8, 6,
		7, 5, 6, 8, 2, 3, 5, 4,
		5, 6, 7, 8, 6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {1.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.0f,
		1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0001);
	kt_end();
}

static void
gen_37(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int IDF skip 2";
	kt_attr_string("mode", "IDF");
	kt_attr_int("max_skip_count", 2);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 12}, (const int32_t[]) {1, 1, 3, 3, 3, 7, 8, 6,
		7, 5, 6, 8, 2, 3, 5, 4,
		5, 6, 7, 8, 6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {1.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.0f,
		1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0001);
	kt_end();
}

static void
gen_38(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int IDF weights 1-D";
	kt_attr_string("mode", "IDF");
	kt_attr_int("max_skip_count", 1);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_floats("weights", 8, (const float[]) {0.5f, 1.5f, 2.0f, 0.25f, 3.0f, 1.0f, 0.1f, 4.0f});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT64, 1, (const int64_t[]) {12}, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8,
		6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 1, (const int64_t[]) {8}, (const float[]) {1.5f, 2.0f, 0.25f, 0.5f, 3.0f, 0.100000001f, 1.0f, 4.0f}, 0.0001);
	kt_end();
}

static void
gen_39(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int TFIDF skip 0";
	kt_attr_string("mode", "TFIDF");
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 12}, (const int32_t[]) {1, 1, 3, 3, 3, 7, 8, 6,
		7, 5, 6, 8, 2, 3, 5, 4,
		5, 6, 7, 8, 6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {3.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.0f,
		1.0f, 2.0f, 1.0f, 3.0f, 1.0f, 2.0f, 1.0f, 1.0f}, 0.0001);
	kt_end();
}

static void
gen_40(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int TFIDF skip 2";
	kt_attr_string("mode", "TFIDF");
	kt_attr_int("max_skip_count", 2);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 12}, (const int32_t[]) {1, 1, 3, 3, 3, 7, 8, 6,
		7, 5, 6, 8, 2, 3, 5, 4,
		5, 6, 7, 8, 6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {3.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 2.0f, 0.0f,
		1.0f, 2.0f, 1.0f, 3.0f, 2.0f, 2.0f, 1.0f, 1.0f}, 0.0001);
	kt_end();
}

static void
gen_41(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer int TFIDF weights 1-D";
	kt_attr_string("mode", "TFIDF");
	kt_attr_int("max_skip_count", 1);
	kt_attr_ints("pool_int64s", 13, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5});
	kt_attr_floats("weights", 8, (const float[]) {0.5f, 1.5f, 2.0f, 0.25f, 3.0f, 1.0f, 0.1f, 4.0f});
	kt_attr_int("max_gram_length", 3);
	kt_attr_int("min_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {3, 0, 1, 2, 4, 6, 5, 7});
	kt_input(OX_INT64, 1, (const int64_t[]) {12}, (const int64_t[]) {2, 3, 5, 4, 5, 6, 7, 8,
		6, 7, 2, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 1, (const int64_t[]) {8}, (const float[]) {1.5f, 4.0f, 0.25f, 1.5f, 3.0f, 0.200000003f, 1.0f, 4.0f}, 0.0001);
	kt_end();
}

static void
gen_42(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer strings grams 1..1";
	kt_attr_string("mode", "TF");
	kt_attr_int("max_skip_count", 1);
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {0, 1, 2, 3, 4, 5, 6, 7});
	kt_attr_strings("pool_strings", 13, (const char *[]) {"the", "cat", "sat", "on", "the", "cat", "cat", "sat", "the", "mat", "sat", "on", "the"});
	kt_input_strings(2, (const int64_t[]) {2, 5}, (const char *[]) {"the", "cat", "sat", "on", "the", "mat", "the", "dog", "cat", "sat"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {2.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f,
		1.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, 0.0001);
	kt_end();
}

static void
gen_43(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer strings grams 2..3";
	kt_attr_string("mode", "TF");
	kt_attr_int("max_skip_count", 1);
	kt_attr_int("min_gram_length", 2);
	kt_attr_int("max_gram_length", 3);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {0, 1, 2, 3, 4, 5, 6, 7});
	kt_attr_strings("pool_strings", 13, (const char *[]) {"the", "cat", "sat", "on", "the", "cat", "cat", "sat", "the", "mat", "sat", "on", "the"});
	kt_input_strings(2, (const int64_t[]) {2, 5}, (const char *[]) {"the", "cat", "sat", "on", "the", "mat", "the", "dog", "cat", "sat"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f, 0.0f, 1.0f,
		0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f}, 0.0001);
	kt_end();
}

static void
gen_44(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer strings grams 1..3";
	kt_attr_string("mode", "TF");
	kt_attr_int("max_skip_count", 1);
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 3);
	kt_attr_ints("ngram_counts", 3, (const int64_t[]) {0, 4, 10});
	kt_attr_ints("ngram_indexes", 8, (const int64_t[]) {0, 1, 2, 3, 4, 5, 6, 7});
	kt_attr_strings("pool_strings", 13, (const char *[]) {"the", "cat", "sat", "on", "the", "cat", "cat", "sat", "the", "mat", "sat", "on", "the"});
	kt_input_strings(2, (const int64_t[]) {2, 5}, (const char *[]) {"the", "cat", "sat", "on", "the", "mat", "the", "dog", "cat", "sat"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 8}, (const float[]) {2.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.0f, 1.0f,
		1.0f, 1.0f, 1.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f}, 0.0001);
	kt_end();
}

static void
gen_45(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer TF shared output index";
	kt_attr_string("mode", "TF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, (const int64_t[]) {0});
	kt_attr_ints("ngram_indexes", 3, (const int64_t[]) {1, 0, 1});
	kt_attr_ints("pool_int64s", 3, (const int64_t[]) {10, 20, 30});
	kt_attr_floats("weights", 3, (const float[]) {0.5f, 2.0f, 7.0f});
	kt_input(OX_INT64, 2, (const int64_t[]) {2, 4}, (const int64_t[]) {10, 10, 20, 20, 30, 10, 30, 5});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 2}, (const float[]) {2.0f, 2.0f, 0.0f, 3.0f}, 0.0001);
	kt_end();
}

static void
gen_46(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer IDF shared output index";
	kt_attr_string("mode", "IDF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, (const int64_t[]) {0});
	kt_attr_ints("ngram_indexes", 3, (const int64_t[]) {1, 0, 1});
	kt_attr_ints("pool_int64s", 3, (const int64_t[]) {10, 20, 30});
	kt_attr_floats("weights", 3, (const float[]) {0.5f, 2.0f, 7.0f});
	kt_input(OX_INT64, 2, (const int64_t[]) {2, 4}, (const int64_t[]) {10, 10, 20, 20, 30, 10, 30, 5});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 2}, (const float[]) {2.0f, 0.5f, 0.0f, 7.0f}, 0.0001);
	kt_end();
}

static void
gen_47(void)
{
	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer TFIDF shared output index";
	kt_attr_string("mode", "TFIDF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, (const int64_t[]) {0});
	kt_attr_ints("ngram_indexes", 3, (const int64_t[]) {1, 0, 1});
	kt_attr_ints("pool_int64s", 3, (const int64_t[]) {10, 20, 30});
	kt_attr_floats("weights", 3, (const float[]) {0.5f, 2.0f, 7.0f});
	kt_input(OX_INT64, 2, (const int64_t[]) {2, 4}, (const int64_t[]) {10, 10, 20, 20, 30, 10, 30, 5});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 2}, (const float[]) {4.0f, 1.0f, 0.0f, 14.5f}, 0.0001);
	kt_end();
}

#define D(...) ((const int64_t[]) {__VA_ARGS__})

static void
normalizer_cases(void)
{
	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer bad case_change_action";
	kt_attr_string("case_change_action", "TITLE");
	kt_input_strings(1, D(1), (const char *[]) {"a"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer [2, C] refused";
	kt_input_strings(2, D(2, 1), (const char *[]) {"a", "b"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer numeric input refused";
	kt_input_f32(1, D(1), (const float[]) {1});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer non-ASCII bytes kept";
	kt_attr_string("case_change_action", "UPPER");
	kt_input_strings(1, D(2), (const char *[]) {"\xc3\xa9t\xc3\xa9", ""});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	expect_strings(0, 1, D(2), (const char *[]) {"\xc3\xa9T\xc3\xa9", ""});
	kt_end();

	kt_begin("StringNormalizer", "", 10);
	kt.label = "StringNormalizer empty input";
	kt_input_strings(1, D(0), NULL);
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	expect_strings(0, 1, D(1), (const char *[]) {""});
	kt_end();
}

static void
split_concat_cases(void)
{
	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit negative maxsplit";
	kt_attr_int("maxsplit", -1);
	kt_input_strings(1, D(1), (const char *[]) {"a b"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit numeric input refused";
	kt_input_i64(1, D(1), (const int64_t[]) {1});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit empty tensor";
	kt_input_strings(2, D(2, 0), NULL);
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	expect_strings(0, 3, D(2, 0, 0), NULL);
	kt_expect_i64(1, 2, D(2, 0), NULL);
	kt_end();

	kt_begin("StringSplit", "", 20);
	kt.label = "StringSplit scalar";
	kt_attr_string("delimiter", "-");
	kt_input_strings(0, D(0), (const char *[]) {"x-y"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 2);
	expect_strings(0, 1, D(2), (const char *[]) {"x", "y"});
	kt_expect_i64(1, 0, D(0), (const int64_t[]) {2});
	kt_end();

	kt_begin("StringConcat", "", 20);
	kt.label = "StringConcat shapes do not broadcast";
	kt_input_strings(1, D(2), (const char *[]) {"a", "b"});
	kt_input_strings(1, D(3), (const char *[]) {"a", "b", "c"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("StringConcat", "", 20);
	kt.label = "StringConcat numeric refused";
	kt_input_strings(1, D(1), (const char *[]) {"a"});
	kt_input_f32(1, D(1), (const float[]) {1});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("StringConcat", "", 20);
	kt.label = "StringConcat empty broadcast";
	kt_input_strings(2, D(0, 1), NULL);
	kt_input_strings(1, D(3), (const char *[]) {"a", "b", "c"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	expect_strings(0, 2, D(0, 3), NULL);
	kt_end();
}

static void
regex_translate_case(const char *pat, const char *want)
{
	ox_status	st;
	char	   *got = NULL;

	kt_begin("RegexFullMatch", "", 20);
	kt.label = pat;
	ox_status_clear(&st);
	if (ox_text_regex_translate(pat, strlen(pat), &got, &st) != OX_OK)
		kt_fail("translation failed: %s%g%g", st.msg, 0, 0);
	else if (strcmp(got, want) != 0)
		kt_fail("translated to %s%g%g", got, 0, 0);
	free(got);
	kt_end();
}

static void
regex_cases(void)
{
	regex_translate_case("\\w+@\\d", "^([[:alnum:]_]+@[0-9])$");
	regex_translate_case("[\\w.\\-]+", "^([[:alnum:]_.-]+)$");
	regex_translate_case("[-a]*?", "^([a-]*)$");
	regex_translate_case("(?:a|b)\\.\\x41", "^((a|b)\\.A)$");
	regex_translate_case("[\\]x]", "^([]x])$");

	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch invalid pattern";
	kt_attr_string("pattern", "a(b");
	kt_input_strings(1, D(1), (const char *[]) {"ab"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch look-ahead unsupported";
	kt_attr_string("pattern", "a(?=b)");
	kt_input_strings(1, D(1), (const char *[]) {"ab"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch pattern missing";
	kt_input_strings(1, D(1), (const char *[]) {"ab"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch empty 2-D input";
	kt_attr_string("pattern", "a");
	kt_input_strings(2, D(2, 0), NULL);
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_values(0, OX_BOOL, 2, D(2, 0), NULL, 0);
	kt_end();

	kt_begin("RegexFullMatch", "", 20);
	kt.label = "RegexFullMatch numeric refused";
	kt_attr_string("pattern", "a");
	kt_input_f32(1, D(1), (const float[]) {1});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
tfidf_cases(void)
{
	static const int64_t pool[] = {1, 2, 3, 1, 2};

	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer ngram_indexes too short";
	kt_attr_string("mode", "TF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 2);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 2, D(0, 3));
	kt_attr_ints("ngram_indexes", 3, D(0, 1, 2));
	kt_attr_ints("pool_int64s", 5, pool);
	kt_input_i64(1, D(2), (const int64_t[]) {1, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer bad mode";
	kt_attr_string("mode", "BM25");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, D(0));
	kt_attr_ints("ngram_indexes", 5, D(0, 1, 2, 3, 4));
	kt_attr_ints("pool_int64s", 5, pool);
	kt_input_i64(1, D(2), (const int64_t[]) {1, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer ngram_counts beyond pool";
	kt_attr_string("mode", "TF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 2);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 2, D(0, 9));
	kt_attr_ints("ngram_indexes", 5, D(0, 1, 2, 3, 4));
	kt_attr_ints("pool_int64s", 5, pool);
	kt_input_i64(1, D(2), (const int64_t[]) {1, 2});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer string input for int pool";
	kt_attr_string("mode", "TF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, D(0));
	kt_attr_ints("ngram_indexes", 5, D(0, 1, 2, 3, 4));
	kt_attr_ints("pool_int64s", 5, pool);
	kt_input_strings(1, D(1), (const char *[]) {"1"});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer no pool";
	kt_attr_string("mode", "TF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, D(0));
	kt_attr_ints("ngram_indexes", 1, D(0));
	kt_input_i64(1, D(1), (const int64_t[]) {1});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer 3-D input refused";
	kt_attr_string("mode", "TF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, D(0));
	kt_attr_ints("ngram_indexes", 5, D(0, 1, 2, 3, 4));
	kt_attr_ints("pool_int64s", 5, pool);
	kt_input_i64(3, D(1, 1, 1), (const int64_t[]) {1});
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TfIdfVectorizer", "", 9);
	kt.label = "TfIdfVectorizer empty row";
	kt_attr_string("mode", "TF");
	kt_attr_int("min_gram_length", 1);
	kt_attr_int("max_gram_length", 1);
	kt_attr_int("max_skip_count", 0);
	kt_attr_ints("ngram_counts", 1, D(0));
	kt_attr_ints("ngram_indexes", 3, D(0, 1, 2));
	kt_attr_ints("pool_int64s", 3, pool);
	kt_input_i64(2, D(2, 0), NULL);
	kt_run(ox_kernels_text, ox_kernels_text_count, 1);
	kt_expect_f32(0, 2, D(2, 3), (const float[]) {0, 0, 0, 0, 0, 0}, 0);
	kt_end();
}

int
main(void)
{
	gen_1();
	gen_2();
	gen_3();
	gen_4();
	gen_5();
	gen_6();
	gen_7();
	gen_8();
	gen_9();
	gen_10();
	gen_11();
	gen_12();
	gen_13();
	gen_14();
	gen_15();
	gen_16();
	gen_17();
	gen_18();
	gen_19();
	gen_20();
	gen_21();
	gen_22();
	gen_23();
	gen_24();
	gen_25();
	gen_26();
	gen_27();
	gen_28();
	gen_29();
	gen_30();
	gen_31();
	gen_32();
	gen_33();
	gen_34();
	gen_35();
	gen_36();
	gen_37();
	gen_38();
	gen_39();
	gen_40();
	gen_41();
	gen_42();
	gen_43();
	gen_44();
	gen_45();
	gen_46();
	gen_47();
	normalizer_cases();
	split_concat_cases();
	regex_cases();
	tfidf_cases();
	return kt_summary();
}

/*
 * text.h
 *	  Private header of the text kernel family (StringNormalizer,
 *	  StringSplit, StringConcat, RegexFullMatch, TfIdfVectorizer): shared
 *	  string helpers and the functions the family table in text.c lists.
 *
 * Symbols that leave a file carry the ox_text_ prefix.
 */
#ifndef OX_KERNELS_CPU_TEXT_H
#define OX_KERNELS_CPU_TEXT_H

#include "kernels/kernel.h"

/* buffer size for a formatted shape */
#define OX_TEXT_SHAPE_LEN 192

/* replace dst with a malloc'ed NUL-terminated copy of data[0..len) */
ox_code		ox_text_string_set(ox_kernel_ctx *ctx, ox_string *dst, const char *data, size_t len);

/* text_regex.c */
ox_code		ox_text_regex_prepare(ox_prepare_ctx *pc);
ox_code		ox_text_regex_run(ox_kernel_ctx *ctx);
void		ox_text_regex_free(void *state);
/* translate an RE2 / Python pattern to POSIX ERE (exposed for unit tests) */
ox_code		ox_text_regex_translate(const char *pat, size_t len, char **out, ox_status *st);

/* text_tfidf.c */
ox_code		ox_text_tfidf_prepare(ox_prepare_ctx *pc);
ox_code		ox_text_tfidf_run(ox_kernel_ctx *ctx);
void		ox_text_tfidf_free(void *state);

#endif							/* OX_KERNELS_CPU_TEXT_H */

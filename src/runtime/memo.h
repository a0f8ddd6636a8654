/*
 * memo.h
 *	  The shape memo (memo.c): nodes that compute shapes, skipped when the
 *	  shapes they start from repeat.  Private to src/runtime.
 */
#ifndef OX_MEMO_H
#define OX_MEMO_H

#include "runtime/exec.h"

/* p->memo for p's graph (NULL when no node qualifies); clears held inputs from p->movable */
ox_code		ox_memo_build(ox_plan *p, ox_status *st);
void		ox_memo_free(ox_memo *m);
/* node k, about to run: true when it is a memo node whose held outputs stand */
bool		ox_memo_skip(ox_memo *m, const ox_plan *p, int k);
/* node k just ran: a memo node's outputs are held when they qualify */
void		ox_memo_store(ox_memo *m, const ox_plan *p, int k);
/* whether node k is one of the memo's (its outputs are kept whole) */
bool		ox_memo_node(const ox_memo *m, int k);
/* value v is held between runs: not to be released */
bool		ox_memo_holds(const ox_memo *m, const ox_graph *g, int v);

#endif							/* OX_MEMO_H */

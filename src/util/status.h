/*
 * status.h
 *	  Status codes and messages returned by every engine call.
 *
 * The engine never aborts, exits or prints: each fallible call fills an
 * ox_status and returns its code.  The PostgreSQL layer maps codes to
 * SQLSTATEs; standalone tools print the message.
 */
#ifndef OX_STATUS_H
#define OX_STATUS_H

#include <stddef.h>

typedef enum ox_code
{
	OX_OK = 0,
	OX_INVALID_MODEL,			/* the model file is malformed or inconsistent */
	OX_INVALID_ARGUMENT,		/* caller input (shape, type, value) is wrong */
	OX_UNSUPPORTED,				/* valid ONNX we do not implement */
	OX_OUT_OF_MEMORY,
	OX_LIMIT_EXCEEDED,			/* a configured size or memory limit */
	OX_CANCELED,				/* the abort callback asked us to stop */
	OX_NOT_FOUND,				/* unknown input/output/provider name */
	OX_INTERNAL					/* a bug: a cannot-happen case */
} ox_code;

#define OX_STATUS_MSG_LEN 1024

typedef struct ox_status
{
	ox_code		code;
	char		msg[OX_STATUS_MSG_LEN];
	/* optional context filled where known: node name and op type */
	char		node[128];
	char		op[64];
} ox_status;

void		ox_status_clear(ox_status *st);

/*
 * Set code and a printf-style message; returns the code so callers can
 * write "return ox_fail(st, OX_INVALID_MODEL, ...)".  A status that already
 * holds an error keeps its first message (the root cause) unless code is
 * OX_OK.  st may be NULL.
 */
ox_code		ox_fail(ox_status *st, ox_code code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Prefix the existing message with context, e.g. "node 'conv1' (Conv): " */
void		ox_status_set_node(ox_status *st, const char *node, const char *op);

const char *ox_code_name(ox_code code);

#define OX_TRY(expr) \
	do { ox_code ox_try_rc_ = (expr); if (ox_try_rc_ != OX_OK) return ox_try_rc_; } while (0)

#endif							/* OX_STATUS_H */

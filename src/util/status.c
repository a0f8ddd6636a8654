/*
 * status.c
 *	  Engine status helpers.
 */
#include "util/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
ox_status_clear(ox_status *st)
{
	if (!st)
		return;
	st->code = OX_OK;
	st->msg[0] = '\0';
	st->node[0] = '\0';
	st->op[0] = '\0';
}

ox_code
ox_fail(ox_status *st, ox_code code, const char *fmt,...)
{
	va_list		ap;

	if (!st || code == OX_OK)
		return code;
	/* keep the first (root-cause) error */
	if (st->code != OX_OK)
		return st->code;
	st->code = code;
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
	va_end(ap);
	return code;
}

void
ox_status_set_node(ox_status *st, const char *node, const char *op)
{
	if (!st || st->node[0] != '\0')
		return;
	snprintf(st->node, sizeof(st->node), "%s", node ? node : "");
	snprintf(st->op, sizeof(st->op), "%s", op ? op : "");
}

const char *
ox_code_name(ox_code code)
{
	switch (code)
	{
		case OX_OK:
			return "ok";
		case OX_INVALID_MODEL:
			return "invalid model";
		case OX_INVALID_ARGUMENT:
			return "invalid argument";
		case OX_UNSUPPORTED:
			return "unsupported";
		case OX_OUT_OF_MEMORY:
			return "out of memory";
		case OX_LIMIT_EXCEEDED:
			return "limit exceeded";
		case OX_CANCELED:
			return "canceled";
		case OX_NOT_FOUND:
			return "not found";
		case OX_INTERNAL:
			return "internal error";
	}
	return "unknown";
}

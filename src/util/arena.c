/*
 * arena.c
 *	  Chunked bump allocator.
 */
#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK_SIZE (64 * 1024)

struct ox_arena_chunk
{
	ox_arena_chunk *next;
	size_t		used;
	size_t		size;
	/* data follows, 16-byte aligned */
	_Alignas(16) unsigned char data[];
};

void
ox_arena_init(ox_arena *a)
{
	a->head = NULL;
	a->total = 0;
}

void
ox_arena_free(ox_arena *a)
{
	ox_arena_chunk *c = a->head;

	while (c)
	{
		ox_arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	a->head = NULL;
	a->total = 0;
}

void *
ox_arena_alloc(ox_arena *a, size_t bytes)
{
	ox_arena_chunk *c = a->head;
	void	   *p;

	if (bytes > SIZE_MAX / 2)
		return NULL;
	bytes = (bytes + 15) & ~(size_t) 15;
	if (!c || c->size - c->used < bytes)
	{
		size_t		size = bytes > ARENA_CHUNK_SIZE / 4 ? bytes : ARENA_CHUNK_SIZE;

		c = malloc(sizeof(ox_arena_chunk) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		if (a->head && size != ARENA_CHUNK_SIZE)
		{
			/* big one-off: keep the current chunk at the head for small allocations */
			c->next = a->head->next;
			a->head->next = c;
		}
		else
		{
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->used;
	c->used += bytes;
	a->total += bytes;
	memset(p, 0, bytes);
	return p;
}

char *
ox_arena_strndup(ox_arena *a, const char *s, size_t len)
{
	char	   *p;

	/* protobuf gives empty byte strings as (NULL, 0) */
	if (!s && len > 0)
		return NULL;
	p = ox_arena_alloc(a, len + 1);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
ox_arena_strdup(ox_arena *a, const char *s)
{
	return s ? ox_arena_strndup(a, s, strlen(s)) : NULL;
}

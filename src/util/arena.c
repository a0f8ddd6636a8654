/*
 * arena.c
 *	  Chunked bump allocator.
 *
 *	  Under AddressSanitizer (the fuzz targets and `make -C fuzz unit-asan`)
 *	  every allocation is followed by a poisoned red zone and a chunk's
 *	  unused tail stays poisoned, so that writing past an allocation is
 *	  reported like a heap overflow.  Without it the model's IR (nodes,
 *	  attribute arrays, names) shares 64 KB chunks, and one attribute
 *	  written past its array would silently land in the next allocation.
 */
#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OX_ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define OX_ARENA_ASAN 1
#endif

#ifdef OX_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_REDZONE 32
#define ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define ARENA_REDZONE 0
#define ARENA_POISON(p, n) ((void) (p), (void) (n))
#define ARENA_UNPOISON(p, n) ((void) (p), (void) (n))
#endif

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

		ARENA_UNPOISON(c->data, c->size);
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
	size_t		asked = bytes,
				need;

	if (bytes > SIZE_MAX / 2)
		return NULL;
	bytes = (bytes + 15) & ~(size_t) 15;
	need = bytes + ARENA_REDZONE;
	if (!c || c->size - c->used < need)
	{
		size_t		size = need > ARENA_CHUNK_SIZE / 4 ? need : ARENA_CHUNK_SIZE;

		c = malloc(sizeof(ox_arena_chunk) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		ARENA_POISON(c->data, size);
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
	c->used += need;
	a->total += bytes;
	/* what was asked for is usable; the rounding and the red zone stay poisoned */
	ARENA_UNPOISON(p, asked);
	memset(p, 0, asked);
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

/*
 * arena.h
 *	  A chunked bump allocator for objects that live and die together
 *	  (a model's IR: names, attributes, small arrays).
 */
#ifndef OX_ARENA_H
#define OX_ARENA_H

#include <stddef.h>

typedef struct ox_arena_chunk ox_arena_chunk;

typedef struct ox_arena
{
	ox_arena_chunk *head;
	size_t		total;			/* bytes handed out, for reporting */
} ox_arena;

void		ox_arena_init(ox_arena *a);
void		ox_arena_free(ox_arena *a);
/* 16-byte aligned, zeroed; NULL on out-of-memory */
void	   *ox_arena_alloc(ox_arena *a, size_t bytes);
/* copy of s (NULL stays NULL); NULL on out-of-memory */
char	   *ox_arena_strdup(ox_arena *a, const char *s);
char	   *ox_arena_strndup(ox_arena *a, const char *s, size_t len);

#endif							/* OX_ARENA_H */

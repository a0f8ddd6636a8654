/*
 * strmap.c
 *	  String -> int hash map (FNV-1a, linear probing, load factor <= 1/2).
 */
#include "util/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t
hash_str(const char *s)
{
	uint64_t	h = 1469598103934665603ULL;

	for (; *s; s++)
	{
		h ^= (unsigned char) *s;
		h *= 1099511628211ULL;
	}
	return h;
}

bool
ox_strmap_init(ox_strmap *m, size_t expected)
{
	size_t		cap = 16;

	while (cap < expected * 2 + 1)
		cap *= 2;
	m->slots = calloc(cap, sizeof(ox_strmap_entry));
	m->cap = m->slots ? cap : 0;
	m->count = 0;
	return m->slots != NULL;
}

void
ox_strmap_free(ox_strmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

static bool
grow(ox_strmap *m)
{
	ox_strmap	bigger;

	if (!ox_strmap_init(&bigger, m->cap))
		return false;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			ox_strmap_put(&bigger, m->slots[i].key, m->slots[i].value);
	free(m->slots);
	*m = bigger;
	return true;
}

bool
ox_strmap_put(ox_strmap *m, const char *key, int value)
{
	size_t		i;

	if ((m->count + 1) * 2 > m->cap && !grow(m))
		return false;
	i = hash_str(key) & (m->cap - 1);
	while (m->slots[i].key)
	{
		if (strcmp(m->slots[i].key, key) == 0)
		{
			m->slots[i].value = value;
			return true;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->count++;
	return true;
}

int
ox_strmap_get(const ox_strmap *m, const char *key)
{
	size_t		i;

	if (!m->cap)
		return -1;
	i = hash_str(key) & (m->cap - 1);
	while (m->slots[i].key)
	{
		if (strcmp(m->slots[i].key, key) == 0)
			return m->slots[i].value;
		i = (i + 1) & (m->cap - 1);
	}
	return -1;
}

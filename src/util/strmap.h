/*
 * strmap.h
 *	  A string -> int open-addressing hash map.  Keys are borrowed: they must
 *	  outlive the map (arena strings do).
 */
#ifndef OX_STRMAP_H
#define OX_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ox_strmap_entry
{
	const char *key;
	int			value;
} ox_strmap_entry;

typedef struct ox_strmap
{
	ox_strmap_entry *slots;
	size_t		cap;			/* power of two */
	size_t		count;
} ox_strmap;

bool		ox_strmap_init(ox_strmap *m, size_t expected);
void		ox_strmap_free(ox_strmap *m);
/* insert or overwrite; false on out-of-memory */
bool		ox_strmap_put(ox_strmap *m, const char *key, int value);
/* value, or -1 when absent */
int			ox_strmap_get(const ox_strmap *m, const char *key);

#endif							/* OX_STRMAP_H */

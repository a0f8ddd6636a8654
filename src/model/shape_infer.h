/*
 * shape_infer.h
 *	  Best-effort static shape inference (see shape_infer.c).
 */
#ifndef OX_SHAPE_INFER_H
#define OX_SHAPE_INFER_H

#include "model/ir.h"

/* Fill unknown value types of every graph from their producers' inputs. */
void		ox_infer_shapes(ox_model *m);

#endif							/* OX_SHAPE_INFER_H */

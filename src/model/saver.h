/*
 * saver.h
 *	  IR -> ONNX protobuf bytes.
 */
#ifndef OX_SAVER_H
#define OX_SAVER_H

#include "model/ir.h"

/* Serialize a model (its live nodes) into a malloc'ed buffer the caller frees. */
ox_code		ox_model_save(const ox_model *m, void **bytes, size_t *len, ox_status *st);

#endif							/* OX_SAVER_H */

/*
 * batch.h
 *	  Automatic batching of row-wise onnx_predict calls (batchplan.c: the
 *	  planner hook that rewrites plans; batchscan.c: the OnnxBatch custom
 *	  scan that executes them) and the set-based form (batchquery.c).
 *
 * The plan shapes.  A plan node P (a scan, join, or projecting Result or
 * Gather) whose target list computes onnx_predict('model', features ...)
 * becomes
 *
 *	 Custom Scan (OnnxBatch)	target list: P's, each batched call and each
 *	   -> P'					Var replaced by a column of the scan tuple
 *
 * where P' is P computing only the calls' feature arguments and the Vars
 * the rest of the target list needs: P''s output is [one feature argument
 * per call..., passed-through values...].  And an Agg A whose aggregates'
 * arguments call onnx_predict('model', column) on a column of its input C
 * becomes
 *
 *	 A							the calls replaced by the appended columns
 *	   -> Custom Scan (OnnxBatch)	C's columns, then one prediction per call
 *			-> C
 *
 * In both, the scan tuple (custom_scan_tlist) is [passed-through values...,
 * one prediction per batched call...].
 *
 * custom_private = list_make3(makeInteger(n_pass), calls,
 * makeInteger(pass_first)): the passed-through values are the child's
 * columns pass_first, pass_first + 1, ...; calls has one list_make2(FuncExpr
 * *call, makeInteger(arg_col)) per batched call: the original onnx_predict
 * call (model and output are its Const arguments; kept for the row-wise
 * fallback) and the 0-based column of the child holding its features.
 */
#ifndef ONNX_BATCH_H
#define ONNX_BATCH_H

#include "nodes/extensible.h"

#define ONNX_BATCH_SCAN_NAME "OnnxBatch"

/* GUCs (batchplan.c) */
#define ONNX_BATCH_SIZE_DEFAULT 1024
#define ONNX_BATCH_SIZE_MIN 1
#define ONNX_BATCH_SIZE_MAX (1024 * 1024)
/* the first batch of a scan, doubling up to onnx.batch_size (LIMIT reads little) */
#define ONNX_BATCH_FIRST 64
/* a batch ends once the values it copied take this much */
#define ONNX_BATCH_MAX_BYTES ((Size) 64 * 1024 * 1024)

extern bool onnx_auto_batch;
extern int	onnx_batch_size;

extern CustomScanMethods OnnxBatchScanMethods;

/* batchscan.c */
extern void OnnxBatchScanInit(void);

/* batchplan.c: is funcid one of our row-wise onnx_predict functions? */
extern bool OnnxIsPredictFunction(Oid funcid);

#endif							/* ONNX_BATCH_H */

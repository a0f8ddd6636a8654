/*
 * schema_check.h
 *	  Nodes checked against the ONNX operator schemas when a model loads.
 *
 * onnxruntime refuses a graph whose node has an attribute its operator
 * does not define, one of another type, or misses a required one, or has
 * more or fewer inputs or outputs than the operator takes, or inputs of one
 * type variable with different element types; before this check the engine
 * took such models and ran them with defaults (a misspelt LeakyRelu "alhpa"
 * ran with alpha 0.01, a string alpha likewise), which gives wrong answers
 * without a word.  Element types are compared only where they are certain
 * (initializers and the main graph's inputs).  Only the domains the onnx
 * package defines are checked (the standard one, ai.onnx.ml, the preview
 * domains); others' operators, and attributes named "__...", pass as
 * onnxruntime lets them.  Where the schemas ask for a float the engine also
 * takes an integer and the reverse (and a single value for a list of its
 * kind), as its attribute getters do; attributes without a type (IR
 * version 1 files) are not type-checked.
 */
#ifndef OX_SCHEMA_CHECK_H
#define OX_SCHEMA_CHECK_H

#include "model/ir.h"

typedef struct ox_op_schema
{
	const char *domain;			/* "" for ai.onnx */
	const char *op;
	int			since;			/* the opset version this schema starts at */
	const char *attrs;			/* "name:code[!],...": code as in gen_onnx_schemas.py, ! required */
	int			min_inputs;		/* omitted optional inputs ("") count, as in the file */
	int			max_inputs;		/* INT_MAX: variadic */
	int			min_outputs;
	int			max_outputs;
	/*
	 * each input's name and type variable, "A:T,B:T" ("-" a fixed type; a
	 * last "T*" repeats, "-*" repeats with types that may differ): inputs
	 * of one variable have one element type
	 */
	const char *input_types;
} ox_op_schema;

/* generated: onnx_schemas.c */
extern const ox_op_schema ox_onnx_schemas[];
extern const int ox_onnx_n_schemas;

/* the schema a node of op_type in domain at opset follows, or NULL if none */
const ox_op_schema *ox_op_schema_find(const char *domain, const char *op_type, int64_t opset);

/* every node of every graph of m against its schema: OX_INVALID_MODEL naming the first misfit */
ox_code		ox_model_check_schemas(const ox_model *m, ox_status *st);

#endif							/* OX_SCHEMA_CHECK_H */

/*
 * loader.h
 *	  Protobuf -> IR conversion pieces shared by the model loader and the
 *	  tools that read ONNX test data (TensorProto / SequenceProto files).
 *
 * Everything here treats its input as hostile: sizes are checked against
 * the bytes actually present before anything is allocated.
 */
#ifndef OX_LOADER_H
#define OX_LOADER_H

#include "model/ir.h"
#include "onnx.pb-c.h"

/* deepest message nesting accepted in a file (protects the unpacker's stack) */
#define OX_MAX_PROTO_DEPTH 96
/* deepest subgraph nesting (If inside Loop inside ...) */
#define OX_MAX_GRAPH_DEPTH 24
/*
 * Operator set imports a model may list.  Models import a few domains;
 * every node looks its domain's version up among them, and a hostile file
 * importing 50,000 took 8 s to load before this limit.
 */
#define OX_MAX_OPSET_IMPORTS 256

/*
 * Walk the protobuf wire format without recursion and check that it is well
 * formed, nests messages at most max_depth deep and unpacks into at most
 * max_unpacked bytes (0: no limit).  Run before unpacking.
 */
ox_code		ox_proto_check_wire(const uint8_t *buf, size_t len,
								const ProtobufCMessageDescriptor *desc, int max_depth,
								size_t max_unpacked, ox_status *st);

/* TensorProto -> dense tensor (owned data).  what names it in messages. */
ox_code		ox_tensor_from_proto(ox_tensor *t, const Onnx__TensorProto *tp,
								 const char *what, ox_status *st);

/*
 * The same, and with take the TensorProto's raw_data becomes the tensor's
 * buffer when it can (whole-byte types, and only for a message unpacked
 * with ox_proto_allocator); tp then has no raw_data left.
 */
ox_code		ox_tensor_take_from_proto(ox_tensor *t, Onnx__TensorProto *tp, bool take,
									  const char *what, ox_status *st);

/* the allocator ox_model_load unpacks with: data buffers aligned for tensors */
extern ProtobufCAllocator ox_proto_allocator;
/* SparseTensorProto -> dense tensor */
ox_code		ox_tensor_from_sparse_proto(ox_tensor *t, const Onnx__SparseTensorProto *sp,
										const char *what, ox_status *st);
/* TypeProto -> ox_type (allocated in the model's arena) */
ox_code		ox_type_from_proto(ox_model *m, ox_type *out, const Onnx__TypeProto *tp,
							   int depth, ox_status *st);

/* onnx-data values (test data files) -> runtime values */
ox_code		ox_value_from_sequence_proto(ox_value *v, const Onnx__SequenceProto *sp,
										 int depth, ox_status *st);
ox_code		ox_value_from_map_proto(ox_value *v, const Onnx__MapProto *mp, ox_status *st);
ox_code		ox_value_from_optional_proto(ox_value *v, const Onnx__OptionalProto *op,
										 int depth, ox_status *st);

/* ONNX element type number -> ox_dtype; OX_UNDEFINED when we do not support it */
ox_dtype	ox_dtype_from_onnx(int32_t onnx_type);

#endif							/* OX_LOADER_H */

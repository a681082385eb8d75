// The Arrow C data and C stream interfaces: the structs through which a
// producer in the same process (pyarrow, polars, DuckDB, ...) hands over record
// batches without a copy, as the Arrow specification defines them
// (https://arrow.apache.org/docs/format/CDataInterface.html and
// CStreamInterface.html). A stable C ABI, declared here so that reading a
// stream needs no Arrow library; the guards let Arrow's own abi.h coexist.
// Ownership: whoever holds a struct whose release is not null must call
// release once; moving a struct is copying it and nulling the source's release.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  // 0 or an errno-compatible code; get_last_error then says why (or NULL).
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  // At the end of the stream: 0 with out->release == NULL.
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  // Valid until the next call on the stream or its release.
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

#ifdef __cplusplus
}
#endif

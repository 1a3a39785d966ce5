// The model format (DESIGN.md §3): a Program as a versioned JSON document.
//
//   {"format": "oar.program", "version": 2,
//    "inputs":     [{"name": "x0", "id": 0, "dtype": "float32", "shape": [-1, 4]}],
//    "parameters": [{"name": "fc.weight", "id": 1, "dtype": "float32", "shape": [4, 8],
//                    "constant": false}],
//    "ops": [{"op": "matmul", "operands": [0, 1],
//             "results": [{"id": 2, "dtype": "float32", "shape": [-1, 8]}],
//             "attrs": [{"bool": false}, {"bool": false}]}],
//    "outputs": [{"name": "out0", "id": 2}],
//    "state_updates": [{"parameter": "bn.running_mean", "id": 9}],
//    "notes": []}
//
// An op with regions (control flow, ops/control_flow.h) has
//    "regions": [{"arguments": [{"id": 5, "dtype": "float32", "shape": [4]}],
//                 "ops": [...], "yields": [6]}, ...]
// Region ops may refer to ids defined earlier in an enclosing block; ids
// defined in a region are not visible after it. "state_updates" lists the
// parameters the program writes (Note [state updates] in ir/tracer.h) and the
// id of each one's new value, defined in the top-level "ops".
//
// Value ids are the printer's %N numbers. An undefined optional operand is
// null. Attributes are typed one-key objects: {"none": null}, {"bool": b},
// {"int": i}, {"float": f}, {"complex": [re, im]}, {"dtype": "float32"},
// {"str": s}, {"ints": [...]}; non-finite floats are the strings "nan",
// "inf", "-inf". An op whose result shapes were kept from the example carries
// "example_shapes": its note. A top-level "meta" value is kept for the
// front end that wrote the file and is not interpreted here.
//
// Versioning: a reader accepts every version up to kFormatVersion and
// rejects newer ones by name, so a file written by a newer oar fails with a
// clear message rather than being misread. Version 1 has no "regions" and no
// "state_updates"; version 2 adds both (a version 1 file that has them is
// rejected). The writer always writes kFormatVersion.
#pragma once
#include <memory>
#include <string>

#include "ir/ir.h"

namespace oar::ir {

constexpr int64_t kFormatVersion = 2;

std::string to_json(const Program& p);

// Parses and validates a document written by to_json, then runs the
// verifier. Every problem is a ValueError that starts with
// "[oar.jit.load] <file_for_errors>: ".
std::unique_ptr<Program> from_json(const std::string& text, const char* file_for_errors);

}  // namespace oar::ir

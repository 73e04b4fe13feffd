// SPDX-License-Identifier: MIT
// argtype.hpp: the types of kernel parameters and of the host values given for
// them (argtype.cpp).  A parameter's type comes from the driver's argument
// information (CL_KERNEL_ARG_TYPE_NAME) with typedefs resolved from the
// program's source and its includes; a value's type from the header's forms
// (stdcl_forkt, stdcl_arg_sett).  An arithmetic value of another arithmetic
// type is converted as C converts an argument to a prototyped parameter;
// anything else that does not match is refused.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace stdcl {

// What a kernel parameter passed by value is, as far as the library can tell.
struct ParamType {
    enum Class : unsigned char {
        unknown,  // no argument information, or a name the library cannot resolve
        sint,  // char, short, int, long (and their typedefs)
        uint,  // uchar, ushort, uint, ulong, size_t...
        real,  // float, double
        half,  // half
        vector,  // floatN, intN...: size bytes
        other,  // a struct or union (size unknown: 0), an array typedef...
        pointer,  // a __global, __constant or __local pointer
    };
    Class cls = unknown;
    size_t size = 0;  // bytes (0: not known)
    std::string resolved;  // the built-in type the name stands for ("" when the same)
};

// typedef name -> the type text of each definition found (several under #if).
using TypedefTable = std::map<std::string, std::vector<std::string>>;

// The typedefs of an OpenCL C text and of the files it #includes (found as the
// compiler finds them: the including file's folder, then dirs), each file read
// once.  Conditional compilation is not followed: a name defined twice with
// different types resolves only where both give the same built-in type.
TypedefTable scan_typedefs(const std::string& source, const std::string& dir, const std::vector<std::string>& dirs);

// The type of a by-value parameter spelled `name` (as the driver reports it);
// size_t and its kin are addr_bytes wide.
ParamType param_type(const std::string& name, const TypedefTable* typedefs, size_t addr_bytes);

// The kinds of value the header's typed forms pass (stdcl.h's STDCL_TYPE_*).
enum ValueClass : int { v_unknown = 0, v_sint = 1, v_uint = 2, v_real = 3, v_pointer = 4, v_other = 5 };

// "double", "8-byte signed integer", "pointer"...: a value's type for messages.
std::string value_type_name(int cls, size_t size);

// Converts the value (cls, size, bytes at value) for parameter p into out (at
// least p.size bytes).  Returns 1 when converted (out holds p.size bytes), 0 when
// it passes as it is, -1 when C would refuse it (why says what was given and what
// the parameter takes).  *note gets the trace's words for a conversion.
int convert_value(const ParamType& p, int cls, size_t size, const void* value, unsigned char* out, std::string* why,
                  std::string* note);

}  // namespace stdcl

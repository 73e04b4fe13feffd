// SPDX-License-Identifier: MIT
// include_scan.hpp: which #include directives an OpenCL C text holds and
// which file each names: one reading, used by the program cache's key (every
// included file's content is in it) and by clcc (which inlines them), so the
// two cannot disagree about which headers a kernel uses.
#pragma once

#include <string>
#include <vector>

namespace stdcl {

struct IncludeDirective {
    char delim;  // '"', '<', or 0 for a computed include (#include MACRO)
    std::string name;  // between the delimiters, or the rest of the line
    int line;  // 1-based line of the directive
    bool after_comment;  // the line starts inside a /* comment that ends before '#'
    int end_line;  // the line the directive ends on (later than line when lines are joined with '\\')
};

// The #include directives of text, in order, as the preprocessor reads them:
// lines ending in a backslash joined to the next, comments as spaces (a block
// comment's line breaks go with it), "%:" as '#'.  A directive counts when
// only spaces and comments precede its '#' on the line; "#include" inside a
// comment or a string literal does not.  A quoted name ends at the first '"',
// an angled one at the first '>' (no comment inside it).
std::vector<IncludeDirective> find_includes(const std::string& text);

// The file an #include names, or "" if none is a regular file: an absolute
// name as is; a quoted one in from_dir first (the including file's folder;
// "" for none), then in dirs in order; an angled one in dirs only.
std::string resolve_include(const std::string& from_dir, char delim, const std::string& name,
                            const std::vector<std::string>& dirs);

}  // namespace stdcl

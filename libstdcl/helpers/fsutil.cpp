// SPDX-License-Identifier: MIT
// fsutil.cpp: file and path helpers shared by the library and its tools.
#include "helpers/fsutil.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace stdcl {

bool read_file(const std::string& path, std::string* out, ReadError* why)
{
    ReadError local;
    ReadError& r = why ? *why : local;
    int e = 0;
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        r.err = errno;
        return false;
    }
    r.opened = true;
    struct stat st;
    std::string text;
    if (::fstat(fd, &st) != 0) {
        e = errno;
    } else if (!S_ISREG(st.st_mode)) {
        e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        r.kind = S_ISDIR(st.st_mode)                     ? "a directory"
            : S_ISFIFO(st.st_mode)                       ? "a FIFO"
            : S_ISSOCK(st.st_mode)                       ? "a socket"
            : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                         : "not a regular file";
    } else {
        text.resize(static_cast<std::size_t>(st.st_size));
        std::size_t got = 0;
        // The size may change while reading: read until end of file.
        for (;;) {
            if (got == text.size()) text.resize(text.size() + 4096);
            ssize_t n = ::read(fd, &text[got], text.size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                e = errno;
                break;
            }
            if (n == 0) break;
            got += static_cast<std::size_t>(n);
        }
        text.resize(got);
    }
    ::close(fd);
    if (e) {
        r.err = e;
        return false;
    }
    *out = std::move(text);
    return true;
}

std::string dirname_of(const std::string& path)
{
    std::size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    std::size_t end = path.find_last_not_of('/', slash);
    if (end == std::string::npos) return "/";
    return path.substr(0, end + 1);
}

std::string join_path(const std::string& dir, const std::string& name)
{
    if (dir.empty() || dir == "." || (!name.empty() && name[0] == '/')) return name;
    return (std::filesystem::path(dir) / name).string();
}

bool is_regular_file(const std::string& path)
{
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec);
}

}  // namespace stdcl

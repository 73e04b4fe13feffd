// SPDX-License-Identifier: MIT
// small_vec.hpp: a vector that keeps its first N elements in itself, so that a
// launch's per-argument lists (claims, allocations) cost no heap allocation for
// kernels of up to N memory arguments.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace stdcl {

template <class T, std::size_t N> class SmallVec {
    static_assert(std::is_nothrow_move_constructible<T>::value, "SmallVec moves its elements when it grows");

public:
    SmallVec() = default;
    SmallVec(const SmallVec&) = delete;
    SmallVec& operator=(const SmallVec&) = delete;
    ~SmallVec()
    {
        clear();
        if (data_ != inline_data()) ::operator delete(data_);
    }

    // Throws std::bad_alloc when more than N elements need memory it cannot get;
    // nothing changes then.
    template <class... A> T& emplace_back(A&&... a)
    {
        if (n_ == cap_) grow();
        T* p = ::new (static_cast<void*>(data_ + n_)) T(std::forward<A>(a)...);
        ++n_;
        return *p;
    }
    void push_back(const T& v) { emplace_back(v); }
    void clear() noexcept
    {
        while (n_) data_[--n_].~T();
    }

    std::size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    T* begin() { return data_; }
    T* end() { return data_ + n_; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + n_; }
    T* data() { return data_; }
    const T* data() const { return data_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }

private:
    T* inline_data() { return reinterpret_cast<T*>(buf_); }
    void grow()
    {
        std::size_t cap = cap_ * 2;
        T* p = static_cast<T*>(::operator new(cap * sizeof(T)));
        for (std::size_t i = 0; i < n_; ++i) {
            ::new (static_cast<void*>(p + i)) T(std::move(data_[i]));
            data_[i].~T();
        }
        if (data_ != inline_data()) ::operator delete(data_);
        data_ = p;
        cap_ = cap;
    }

    alignas(T) unsigned char buf_[N * sizeof(T)];
    T* data_ = reinterpret_cast<T*>(buf_);
    std::size_t n_ = 0;
    std::size_t cap_ = N;
};

}  // namespace stdcl

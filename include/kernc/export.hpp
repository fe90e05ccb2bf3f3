#pragma once
/// \file
/// KERNC_API marks the declarations that make up kernc's binary interface. The library is
/// built with hidden visibility, so nothing else is exported from libkernc.so
/// (tests/unit/test_linkage.cpp fails when an internal symbol is). A static kernc defines
/// KERNC_STATIC for its users, and the mark is empty.

/// Every public header that needs C++17 includes this one before its declarations, so a
/// C++14 compile stops here, with this message, before the first error inside kernc's
/// headers. A CMake consumer never sees it: kernc::kernc requires cxx_std_17.
#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 201703L
#error "kernc's headers need C++17 or later: compile with -std=c++17 (CMake: link kernc::kernc, which asks for it)"
#endif

#if defined(KERNC_STATIC)
#define KERNC_API
#else
#define KERNC_API __attribute__((visibility("default")))
#endif

#pragma once
/// \file
/// KERNC_API marks the declarations that make up kernc's binary interface. The library is
/// built with hidden visibility, so nothing else is exported from libkernc.so
/// (tests/unit/test_linkage.cpp fails when an internal symbol is). A static kernc defines
/// KERNC_STATIC for its users, and the mark is empty.

#if defined(KERNC_STATIC)
#define KERNC_API
#else
#define KERNC_API __attribute__((visibility("default")))
#endif

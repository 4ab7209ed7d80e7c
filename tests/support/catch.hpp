#pragma once
// Catch2 v2 (Debian 12) or v3 (newer systems), whichever is installed.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define RTM_CATCH3 1
#else
#include <catch2/catch.hpp>
#endif

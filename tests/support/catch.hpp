#pragma once
// Catch2 v2 (Debian 12) or v3 (newer systems), whichever is installed. Our own main
// (catch_main.cpp) runs the session in both.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define RTM_CATCH3 1
#else
#ifdef RTM_CATCH_MAIN_TU
#define CATCH_CONFIG_RUNNER
#endif
#include <catch2/catch.hpp>
#endif

// Catch2 v2 builds its main in one translation unit; v3 links Catch2WithMain instead.
#if !__has_include(<catch2/catch_all.hpp>)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif

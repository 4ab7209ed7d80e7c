#include "support/catch.hpp"
#ifndef RTM_CATCH3
// Catch2 v2 has no separate main library.
#define CATCH_CONFIG_RUNNER
int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
#endif

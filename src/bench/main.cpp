// Standalone driver of rtm bench (the same as `rtm bench ...`).
#include <exception>
#include <iostream>

#include "bench/bench.h"

int main(int argc, char** argv) {
    try {
        return rtm::run_bench(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "rtm-bench: " << e.what() << "\n";
        return 1;
    }
}

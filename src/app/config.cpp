#include "app/config.h"

#include <fstream>
#include <iostream>

#include "core/error.h"

namespace rtm::app {

bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   po::variables_map& vm) {
    po::options_description common("General");
    common.add_options()
        ("help,h", "show this help")
        ("config,c", po::value<std::string>(), "INI configuration file; its [section] key = value "
                                               "lines are the options section.key below, and "
                                               "options on the command line take precedence");
    po::options_description all;
    all.add(common).add(desc);
    try {
        po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
        if (vm.count("help")) {
            std::cout << usage << "\n" << all << "\n";
            return false;
        }
        if (vm.count("config")) {
            const std::string path = vm["config"].as<std::string>();
            std::ifstream in(path);
            if (!in) fail(path, "cannot open the configuration file", "Check the --config path");
            try {
                po::store(po::parse_config_file(in, all), vm);
            } catch (const po::error& e) {
                fail(path, e.what(), "See rtm <command> --help for the options and their sections");
            }
        }
        po::notify(vm);
    } catch (const po::error& e) {
        fail("command line", e.what(), "See rtm <command> --help");
    }
    return true;
}

}  // namespace rtm::app

#pragma once
// Options for rtm's commands: an INI configuration file (--config) whose
// "[section] key = value" lines are the options "section.key", with the same options
// on the command line taking precedence. Boost.Program_options does the parsing.
// Paths are relative to the working directory.
#include <string>

#include <boost/program_options.hpp>

namespace rtm::app {

namespace po = boost::program_options;

// Parses argv (argv[0] the command's name) and the --config file into `vm`. Returns
// false when --help was asked for (the help text, with `usage` on top, is printed).
// `others` are the options of rtm's other commands: one INI file may hold a modelling
// and a migration job, so the file's options found there are skipped (a debug message
// says so); on the command line they are refused. Unknown options, bare arguments and
// bad values throw rtm::Error naming the option (and the file).
bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   const po::options_description& others, po::variables_map& vm);

// All the options of each job command (defined beside the command).
po::options_description model_command_options();
po::options_description migrate_command_options();

}  // namespace rtm::app

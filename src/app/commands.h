#pragma once
// rtm's commands; each takes the arguments after its name and returns the exit code.
namespace rtm::app {

int cmd_info(int argc, char** argv);
int cmd_model(int argc, char** argv);
int cmd_migrate(int argc, char** argv);
int cmd_version();

}  // namespace rtm::app

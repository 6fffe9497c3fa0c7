# slaterlab_auto_option(<name> <doc>): a cache option <name> = AUTO (default),
# ON or OFF, for a feature that needs a package: AUTO uses it when found, ON
# fails at configure time when it is not, OFF never uses it. Sets <name>_MODE
# in the caller to the upper-case value; any other value is a configure error.
function(slaterlab_auto_option name doc)
  set(${name} "AUTO" CACHE STRING "${doc}: AUTO, ON or OFF")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" mode)
  if(NOT mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${name} must be AUTO, ON or OFF, got '${${name}}'")
  endif()
  set(${name}_MODE ${mode} PARENT_SCOPE)
endfunction()

# FindArb: locate FLINT/Arb (ball arithmetic). Debian's libflint-arb-dev ships
# no pkg-config or CMake file, so look for the header and the library by name.
# Defines the imported target Arb::Arb.
find_path(ARB_INCLUDE_DIR arb_mat.h PATH_SUFFIXES arb flint)
find_path(FLINT_INCLUDE_DIR flint/flint.h)
find_library(ARB_LIBRARY NAMES flint-arb arb)
find_library(FLINT_LIBRARY NAMES flint)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Arb
  REQUIRED_VARS ARB_LIBRARY ARB_INCLUDE_DIR FLINT_LIBRARY FLINT_INCLUDE_DIR)

if(Arb_FOUND AND NOT TARGET Arb::Arb)
  add_library(Arb::Arb UNKNOWN IMPORTED)
  set_target_properties(Arb::Arb PROPERTIES
    IMPORTED_LOCATION "${ARB_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ARB_INCLUDE_DIR};${FLINT_INCLUDE_DIR};${FLINT_INCLUDE_DIR}/flint"
    INTERFACE_LINK_LIBRARIES "${FLINT_LIBRARY}")
endif()
mark_as_advanced(ARB_INCLUDE_DIR FLINT_INCLUDE_DIR ARB_LIBRARY FLINT_LIBRARY)

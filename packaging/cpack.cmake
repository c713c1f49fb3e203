# CPack: one Debian package, neuronmon_<version>_<arch>.deb, built with `cpack -G DEB` in the build
# directory. Included by packaging/CMakeLists.txt; CPackConfig.cmake lands in the top build
# directory and packages every install() rule of the project.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME neuronmon)
set(CPACK_PACKAGE_VENDOR "The neuronmon authors")
set(CPACK_PACKAGE_CONTACT "${NEURONMON_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# Implicitly created directories get 0755 whatever the umask of the packager.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "monitor for AWS Trainium and Inferentia accelerators")
# The extended description, wrapped for dpkg (CPack indents each line and turns empty ones into
# " .").
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "neuron-monitord samples an AWS Trainium or Inferentia device - by default a"
  "realistic, deterministic simulation of a Trainium instance - keeps a bounded"
  "history and streams its metrics over a unix socket to three clients:"
  "neuron-top, a live terminal view that also diagnoses why NeuronCores sit idle"
  "(input pipeline, collectives, HBM bandwidth, a straggler, errors);"
  "neuron-monitor, which prints AWS neuron-monitor compatible JSON lines; and"
  "neuron-ls, the device inventory and topology."
  ""
  "The daemon also serves Prometheus metrics on 127.0.0.1:9413 and runs as a"
  "hardened systemd service (Type=notify, watchdog, socket activation) under its"
  "own user. Members of the neuron-monitor group may use it without root.")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${NEURONMON_PACKAGE_HOMEPAGE}")
# Library dependencies (libprotobuf, libgrpc++1.51, libsystemd0, libncursesw6, ...) come from
# dpkg-shlibdeps; adduser creates the user where systemd-sysusers is missing.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, bash-completion")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_SOURCE_DIR}/debian/conffiles
    ${CMAKE_CURRENT_SOURCE_DIR}/debian/postinst
    ${CMAKE_CURRENT_SOURCE_DIR}/debian/prerm
    ${CMAKE_CURRENT_SOURCE_DIR}/debian/postrm)
# Maintainer scripts 0755, conffiles 0644, whatever the checkout's modes.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# `make package_source`: a tarball of the sources, without build trees or git metadata.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/build/" "/\\\\.git/" "/\\\\.cache/")

include(CPack)

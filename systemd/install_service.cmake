# Run by `cmake --install` (CMakeLists.txt sets PROFCOLLECT_SOURCE_DIR, PROFCOLLECT_STAGING_DIR,
# PROFCOLLECT_BINDIR and PROFCOLLECT_DOCDIR before it). CMAKE_INSTALL_PREFIX is the prefix of this
# install, --prefix included; file(INSTALL) puts DESTDIR in front of every destination itself.

# The configuration directory of the prefix, as GNUInstallDirs chooses it: /etc for /usr,
# /etc/opt/X for /opt/X, PREFIX/etc otherwise.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(sysconfdir "/etc")
elseif(CMAKE_INSTALL_PREFIX MATCHES "^/opt/")
  set(sysconfdir "/etc${CMAKE_INSTALL_PREFIX}")
else()
  set(sysconfdir "${CMAKE_INSTALL_PREFIX}/etc")
endif()

# The unit names /usr/bin/profcollect and /etc/profcollect/profcollect.toml; under another prefix
# it names the binary and the configuration this install puts in place. systemd reads units from
# PREFIX/lib/systemd/system for /usr and /usr/local.
file(READ "${PROFCOLLECT_SOURCE_DIR}/systemd/profcollect.service" unit)
string(REPLACE "ExecStart=/usr/bin/profcollect daemon --config /etc/profcollect/profcollect.toml"
       "ExecStart=${CMAKE_INSTALL_PREFIX}/${PROFCOLLECT_BINDIR}/profcollect daemon --config ${sysconfdir}/profcollect/profcollect.toml"
       unit "${unit}")
string(REPLACE "file:/usr/share/doc/profcollect/"
       "file:${CMAKE_INSTALL_PREFIX}/${PROFCOLLECT_DOCDIR}/" unit "${unit}")
# Staged in the build tree under a name of its own per destination, as installs to several
# destinations may run at once.
string(MD5 destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(staged "${PROFCOLLECT_STAGING_DIR}/${destination}/profcollect.service")
file(WRITE "${staged}" "${unit}")
file(INSTALL "${staged}"
     DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# The example becomes the configuration only where none exists yet: an install never overwrites
# a configuration the administrator edited.
if(EXISTS "$ENV{DESTDIR}${sysconfdir}/profcollect/profcollect.toml")
  message(STATUS "Kept: $ENV{DESTDIR}${sysconfdir}/profcollect/profcollect.toml")
else()
  file(INSTALL "${PROFCOLLECT_SOURCE_DIR}/systemd/profcollect.toml.example"
       DESTINATION "${sysconfdir}/profcollect" RENAME profcollect.toml
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endif()

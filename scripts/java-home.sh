# Sourced by bin/sallyport, scripts/test and .ci/run: finds a JDK 25 or newer and exports JAVA_HOME.
# Order: $SALLYPORT_JAVA_HOME, $JAVA_HOME, then every JDK under /usr/lib/jvm (newest first).
sallyport_java_version() { # prints the feature version of the JDK at $1, or nothing
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  # the JDK's release file names its version without starting a JVM (0.2 s saved on every command)
  if [ -f "$1/release" ] && grep -q '^JAVA_VERSION="[0-9]' "$1/release"; then
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" | head -n 1
    return 0
  fi
  "$1/bin/java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n 1
}

sallyport_find_java() {
  local c v
  for c in "${SALLYPORT_JAVA_HOME:-}" "${JAVA_HOME:-}" $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV); do
    [ -n "$c" ] || continue
    c=${c%/}
    v=$(sallyport_java_version "$c")
    if [ -n "$v" ] && [ "$v" -ge 25 ]; then
      export JAVA_HOME="$c"
      export PATH="$JAVA_HOME/bin:$PATH"
      export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
      return 0
    fi
  done
  echo "sallyport: no JDK 25 found (looked at \$SALLYPORT_JAVA_HOME, \$JAVA_HOME and /usr/lib/jvm/*; expected: a JDK 25 or newer, e.g. 'apt-get install temurin-25-jdk' from the Adoptium repository, then set SALLYPORT_JAVA_HOME to its folder)" >&2
  return 1
}

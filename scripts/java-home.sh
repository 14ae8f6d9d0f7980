# Sourced by bin/sallyport, scripts/test and .ci/run: finds a JDK 25 or newer and exports JAVA_HOME.
# Order: $SALLYPORT_JAVA_HOME, $JAVA_HOME, then every JDK under /usr/lib/jvm (newest first).
sallyport_java_version() { # prints the feature version of the JDK at $1, or nothing
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  # the JDK's release file names its version without starting a JVM (0.2 s saved on every command); read with
  # bash alone, since every process this script starts delays every sallyport command
  local line
  if [ -f "$1/release" ]; then
    while IFS= read -r line; do
      if [[ $line =~ ^JAVA_VERSION=\"([0-9]+) ]]; then
        echo "${BASH_REMATCH[1]}"
        return 0
      fi
    done < "$1/release"
  fi
  "$1/bin/java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n 1
}

sallyport_find_java() {
  local c
  for c in "${SALLYPORT_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
    [ -n "$c" ] && sallyport_use_java "${c%/}" && return 0
  done
  for c in $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV); do
    sallyport_use_java "${c%/}" && return 0
  done
  echo "sallyport: no JDK 25 found (looked at \$SALLYPORT_JAVA_HOME, \$JAVA_HOME and /usr/lib/jvm/*; expected: a JDK 25 or newer, e.g. 'apt-get install temurin-25-jdk' from the Adoptium repository, then set SALLYPORT_JAVA_HOME to its folder)" >&2
  return 1
}

sallyport_use_java() { # exports JAVA_HOME=$1 when it is a JDK 25 or newer
  local v
  v=$(sallyport_java_version "$1")
  [ -n "$v" ] && [ "$v" -ge 25 ] || return 1
  export JAVA_HOME="$1"
  export PATH="$JAVA_HOME/bin:$PATH"
  export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
}

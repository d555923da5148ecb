package io.github.electionpolicy.testkit;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import io.github.electionpolicy.Substrate;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * jqwik arbitraries for the decision's inputs, spelled in every way an operator or a cluster might spell
 * them.
 *
 * <p>For a row of the {@link TruthTable}, {@link #scenarios(TruthTable.Row, String)} combines:
 *
 * <ul>
 *   <li>a kill switch in every accepted spelling ({@code true, 1, yes, on} and {@code false, 0, no, off})
 *       in random case with surrounding blanks, or, for election on, unset, empty or blank;
 *   <li>pod variables: both usable (IPv4, IPv6 or DNS host, any port) for a pod; for outside a pod, each
 *       absent, empty or blank, or only one of the two usable;
 *   <li>unrelated noise variables, including look-alikes such as {@code KUBERNETES_SERVICE_PORT_HTTPS},
 *       lower-case {@code leader_election_enabled} and, when the kill switch has a custom name, the default
 *       {@value ElectionPolicy#DEFAULT_KILL_SWITCH_VARIABLE} set to anything;
 *   <li>a substrate with a random name and the row's capability.
 * </ul>
 *
 * <p>{@link #invalidKillSwitchValues()} and {@link #invalidKillSwitchScenarios()} cover the error path. The
 * same arbitraries back {@code @ForAll TruthTable.Row}, {@code @ForAll Scenario}, {@code @ForAll
 * InvalidKillSwitchScenario} and {@code @ForAll Substrate} through {@link ElectionArbitraryProvider}.
 *
 * <pre>{@code
 * @Property
 * void everySpellingOfRowThree(@ForAll("rowThree") Scenario scenario) { ... }
 *
 * @Provide
 * Arbitrary<Scenario> rowThree() {
 *   return ElectionArbitraries.scenarios(TruthTable.rows().get(2), "MY_OPERATOR_LEADER_ELECTION");
 * }
 * }</pre>
 *
 * <p>Stateless and thread-safe; the returned arbitraries are immutable.
 */
public final class ElectionArbitraries {

  // The accepted spellings, written out here as the testkit's own specification of the kill switch.
  private static final List<String> ELECTION_ON_SPELLINGS = List.of("true", "1", "yes", "on");
  private static final List<String> ELECTION_OFF_SPELLINGS = List.of("false", "0", "no", "off");
  private static final Set<String> ACCEPTED_SPELLINGS = Set.of(
      "true", "1", "yes", "on", "false", "0", "no", "off");

  // Space and tab only: both are trimmed and both count as blank, so the spelling stays unambiguous.
  private static final List<String> BLANKS = List.of(" ", "  ", "\t", " \t ");
  private static final List<String> PADDING = List.of("", "", "", " ", "  ", "\t", " \t");

  private static final List<String> TYPOS = List.of(
      "ture", "treu", "flase", "fasle", "ys", "yes please", "enabled", "disabled", "enable", "disable",
      "2", "-1", "+1", "1.0", "01", "00", "t", "f", "y", "n", "of", "offf", "onn", "o n", "none", "null",
      "nil", "undefined", "true false", "leader", "LEADER_ELECTION_ENABLED", "${LEADER_ELECTION_ENABLED}");

  private static final List<String> LOOKALIKE_VARIABLES = List.of(
      "KUBERNETES_SERVICE_PORT_HTTPS", "KUBERNETES_PORT", "KUBERNETES_PORT_443_TCP",
      "KUBERNETES_PORT_443_TCP_ADDR", "kubernetes_service_host", "kubernetes_service_port",
      ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE, "leader_election_enabled", "LEADER_ELECTION",
      "ELECTION_ENABLED", "HOSTNAME", "POD_NAME", "POD_NAMESPACE", "HOME", "PATH");

  private static final List<String> WELL_KNOWN_SUBSTRATES = List.of(
      "kubernetes", "direct", "docker", "podman", "nomad", "systemd", "local processes", "batch/v1 Job");

  private ElectionArbitraries() {}

  /**
   * Returns the eight rows of the {@link TruthTable}; exhaustive generation enumerates each exactly once.
   *
   * @return an arbitrary over {@link TruthTable#rows()}
   */
  public static Arbitrary<TruthTable.Row> rows() {
    return Arbitraries.of(TruthTable.rows());
  }

  /**
   * Returns scenarios for every row, with the default kill-switch variable most of the time and custom
   * names otherwise.
   *
   * @return an arbitrary of scenarios
   */
  public static Arbitrary<Scenario> scenarios() {
    return Combinators.combine(rows(), killSwitchVariables()).flatAs(ElectionArbitraries::scenarios);
  }

  /**
   * Returns scenarios for every row, for a controller that reads the given kill-switch variable.
   *
   * @param killSwitchVariable the kill-switch variable's name
   * @return an arbitrary of scenarios
   * @throws IllegalArgumentException if the name is a service variable's
   */
  public static Arbitrary<Scenario> scenarios(String killSwitchVariable) {
    requireKillSwitchVariable(killSwitchVariable);
    return rows().flatMap(row -> scenarios(row, killSwitchVariable));
  }

  /**
   * Returns scenarios that realise one row in many spellings.
   *
   * @param row the row to realise
   * @param killSwitchVariable the kill-switch variable's name
   * @return an arbitrary of scenarios, all for {@code row}
   * @throws IllegalArgumentException if the name is a service variable's
   */
  public static Arbitrary<Scenario> scenarios(TruthTable.Row row, String killSwitchVariable) {
    Objects.requireNonNull(row, "row");
    requireKillSwitchVariable(killSwitchVariable);
    return Combinators.combine(
            killSwitchValues(row.killSwitch()),
            processHostVariables(row.processHost()),
            noiseVariables(killSwitchVariable),
            substrates(row.substrateUsesKubernetesApi()))
        .as((killSwitch, host, noise, substrate) -> {
          Map<String, String> variables = new HashMap<>(noise);
          killSwitch.ifPresent(value -> variables.put(killSwitchVariable, value));
          variables.putAll(host);
          return new Scenario(row, killSwitchVariable, variables, substrate);
        })
        // The product of the parts' edge cases runs into thousands and would crowd out random spellings;
        // the plainest spelling of each row is Scenario.canonical, which the contract tries exhaustively.
        .withoutEdgeCases();
  }

  /**
   * Returns values of the kill switch that read as the given state. For {@link
   * KillSwitch.State#ELECTION_ON}: unset (an empty optional), empty, blank, or {@code true, 1, yes, on};
   * for {@link KillSwitch.State#ELECTION_OFF}: {@code false, 0, no, off}. Words come in random case with
   * blanks around them.
   *
   * @param state the state the values must read as
   * @return an arbitrary of values, empty meaning the variable is not set
   */
  public static Arbitrary<Optional<String>> killSwitchValues(KillSwitch.State state) {
    Objects.requireNonNull(state, "state");
    if (state == KillSwitch.State.ELECTION_OFF) {
      return spelled(ELECTION_OFF_SPELLINGS).map(Optional::of);
    }
    return Arbitraries.frequencyOf(List.of(
        Tuple.of(2, Arbitraries.just(Optional.<String>empty())),
        Tuple.of(1, Arbitraries.just(Optional.of(""))),
        Tuple.of(1, Arbitraries.of(BLANKS).map(Optional::of)),
        Tuple.of(6, spelled(ELECTION_ON_SPELLINGS).map(Optional::of))));
  }

  /**
   * Returns the two service variables as a map, spelled so that the host is of the given kind. For a pod
   * both are usable; outside a pod each is absent, empty or blank, or only one of the two is usable.
   *
   * @param kind the kind of host the variables must make
   * @return an arbitrary of maps holding zero, one or both of {@value ProcessHost#SERVICE_HOST_VARIABLE} and
   *     {@value ProcessHost#SERVICE_PORT_VARIABLE}
   */
  public static Arbitrary<Map<String, String>> processHostVariables(ProcessHost.Kind kind) {
    Objects.requireNonNull(kind, "kind");
    Arbitrary<Optional<String>> usableHost = serviceHosts().map(Optional::of);
    Arbitrary<Optional<String>> usablePort = servicePorts().map(Optional::of);
    if (kind == ProcessHost.Kind.KUBERNETES_POD) {
      return Combinators.combine(usableHost, usablePort).as(ElectionArbitraries::serviceVariables);
    }
    return Arbitraries.oneOf(List.of(
        Combinators.combine(unusableServiceValues(), unusableServiceValues())
            .as(ElectionArbitraries::serviceVariables),
        Combinators.combine(usableHost, unusableServiceValues()).as(ElectionArbitraries::serviceVariables),
        Combinators.combine(unusableServiceValues(), usablePort).as(ElectionArbitraries::serviceVariables)));
  }

  /**
   * Returns API server hosts as a pod sees them: IPv4 addresses, IPv6 addresses in full and compressed
   * form, and DNS names.
   *
   * @return an arbitrary of non-blank hosts
   */
  public static Arbitrary<String> serviceHosts() {
    Arbitrary<String> ipv4 = Arbitraries.integers().between(0, 255).list().ofSize(4)
        .map(octets -> octets.stream().map(String::valueOf).collect(Collectors.joining(".")));
    Arbitrary<String> group = Arbitraries.integers().between(0, 0xffff).map(Integer::toHexString);
    Arbitrary<String> ipv6Full = group.list().ofSize(8).map(groups -> String.join(":", groups));
    Arbitrary<String> ipv6Compressed = Combinators.combine(
            group.list().ofMinSize(0).ofMaxSize(3), group.list().ofMinSize(0).ofMaxSize(3))
        .as((head, tail) -> String.join(":", head) + "::" + String.join(":", tail));
    return Arbitraries.oneOf(List.of(
        ipv4,
        ipv6Full,
        ipv6Compressed,
        Arbitraries.of("10.96.0.1", "fd00:10:96::1", "::1", "kubernetes.default.svc")));
  }

  /**
   * Returns API server ports as a pod sees them.
   *
   * @return an arbitrary of decimal port numbers from 1 to 65535
   */
  public static Arbitrary<String> servicePorts() {
    return Arbitraries.integers().between(1, 65535).map(String::valueOf).edgeCases(edges -> edges.add("443"));
  }

  /**
   * Returns variables the decision does not read: look-alikes of the variables it does read and random
   * names, with values that would matter if they were read ({@code false}, {@code 0}, empty, blank).
   *
   * @param killSwitchVariable the kill-switch variable's name, never generated as noise
   * @return an arbitrary of maps with up to five variables, none named {@code killSwitchVariable}, {@value
   *     ProcessHost#SERVICE_HOST_VARIABLE} or {@value ProcessHost#SERVICE_PORT_VARIABLE}
   */
  public static Arbitrary<Map<String, String>> noiseVariables(String killSwitchVariable) {
    Objects.requireNonNull(killSwitchVariable, "killSwitchVariable");
    Set<String> read = Set.of(
        killSwitchVariable, ProcessHost.SERVICE_HOST_VARIABLE, ProcessHost.SERVICE_PORT_VARIABLE);
    Arbitrary<String> names = Arbitraries.oneOf(List.of(Arbitraries.of(LOOKALIKE_VARIABLES), variableNames()))
        .filter(name -> !read.contains(name));
    Arbitrary<String> values = Arbitraries.oneOf(List.of(
        Arbitraries.of("false", "0", "no", "off", "true", "", " ", "10.96.0.1", "443"),
        Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(16)));
    return Arbitraries.maps(names, values).ofMaxSize(5);
  }

  /**
   * Returns names for the kill-switch variable: the default {@value
   * ElectionPolicy#DEFAULT_KILL_SWITCH_VARIABLE} half of the time, otherwise custom names of letters,
   * digits and underscores.
   *
   * @return an arbitrary of valid variable names, never a service variable's
   */
  public static Arbitrary<String> killSwitchVariables() {
    return Arbitraries.frequencyOf(List.of(
            Tuple.of(3, Arbitraries.just(ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE)),
            Tuple.of(1, Arbitraries.of("MY_OPERATOR_LEADER_ELECTION", "ELECTION_ENABLED", "_", "leader_election")),
            Tuple.of(2, variableNames())))
        .filter(ElectionArbitraries::isNotAServiceVariable);
  }

  /**
   * Returns substrates of either capability with random names.
   *
   * @return an arbitrary of substrates
   */
  public static Arbitrary<Substrate> substrates() {
    return Arbitraries.of(true, false).flatMap(ElectionArbitraries::substrates);
  }

  /**
   * Returns substrates of the given capability with random names: well-known ones, and random names with
   * letters (accented ones too), digits, spaces and punctuation.
   *
   * @param usesKubernetesApi the capability every generated substrate has
   * @return an arbitrary of substrates
   */
  public static Arbitrary<Substrate> substrates(boolean usesKubernetesApi) {
    Arbitrary<String> randomNames = Arbitraries.strings()
        .withCharRange('a', 'z').withCharRange('A', 'Z').withCharRange('0', '9').withCharRange('\u00e0', '\u00ff')
        .withChars(" -_./:")
        .ofMinLength(1).ofMaxLength(24)
        .filter(name -> !name.isBlank());
    return Arbitraries.oneOf(List.of(Arbitraries.of(WELL_KNOWN_SUBSTRATES), randomNames))
        .map(name -> Substrate.of(name, usesKubernetesApi));
  }

  /**
   * Returns kill-switch values the library must reject: typical typos and random printable text, never
   * blank and never an accepted spelling in any case. The values hold no double quote, backslash or control
   * character, so a message that quotes a value contains it verbatim.
   *
   * @return an arbitrary of invalid values
   */
  public static Arbitrary<String> invalidKillSwitchValues() {
    Arbitrary<String> typos = Combinators.combine(
            Arbitraries.of("", "", " "), Arbitraries.of(TYPOS), Arbitraries.of("", "", " "))
        .as((before, typo, after) -> before + typo + after);
    Arbitrary<String> random = Arbitraries.strings().withCharRange(' ', '~').excludeChars('"', '\\')
        .ofMinLength(1).ofMaxLength(12);
    return Arbitraries.oneOf(List.of(typos, random)).filter(ElectionArbitraries::isInvalidKillSwitchValue);
  }

  /**
   * Returns environments whose kill switch holds an invalid value, with the default or a custom variable
   * name, any pod variables, noise and any substrate.
   *
   * @return an arbitrary of invalid-kill-switch scenarios
   */
  public static Arbitrary<InvalidKillSwitchScenario> invalidKillSwitchScenarios() {
    return killSwitchVariables().flatMap(ElectionArbitraries::invalidKillSwitchScenarios);
  }

  /**
   * Returns environments whose kill switch, read from the given variable, holds an invalid value.
   *
   * @param killSwitchVariable the kill-switch variable's name
   * @return an arbitrary of invalid-kill-switch scenarios
   * @throws IllegalArgumentException if the name is a service variable's
   */
  public static Arbitrary<InvalidKillSwitchScenario> invalidKillSwitchScenarios(String killSwitchVariable) {
    requireKillSwitchVariable(killSwitchVariable);
    Arbitrary<Map<String, String>> anyHost = Arbitraries.of(ProcessHost.Kind.class)
        .flatMap(ElectionArbitraries::processHostVariables);
    return Combinators.combine(
            invalidKillSwitchValues(), anyHost, noiseVariables(killSwitchVariable), substrates())
        .as((value, host, noise, substrate) -> {
          Map<String, String> variables = new HashMap<>(noise);
          variables.put(killSwitchVariable, value);
          variables.putAll(host);
          return new InvalidKillSwitchScenario(killSwitchVariable, value, variables, substrate);
        })
        .withoutEdgeCases();
  }

  private static Arbitrary<String> spelled(List<String> words) {
    return Combinators.combine(
            Arbitraries.of(PADDING), Arbitraries.of(words).flatMap(ElectionArbitraries::inRandomCase),
            Arbitraries.of(PADDING))
        .as((before, word, after) -> before + word + after);
  }

  private static Arbitrary<String> inRandomCase(String word) {
    return Arbitraries.of(true, false).list().ofSize(word.length()).map(upper -> {
      StringBuilder spelled = new StringBuilder(word.length());
      for (int i = 0; i < word.length(); i++) {
        char c = word.charAt(i);
        spelled.append(upper.get(i) ? Character.toUpperCase(c) : c);
      }
      return spelled.toString();
    });
  }

  private static Arbitrary<Optional<String>> unusableServiceValues() {
    return Arbitraries.frequencyOf(List.of(
        Tuple.of(2, Arbitraries.just(Optional.<String>empty())),
        Tuple.of(1, Arbitraries.just(Optional.of(""))),
        Tuple.of(1, Arbitraries.of(BLANKS).map(Optional::of))));
  }

  private static Map<String, String> serviceVariables(Optional<String> host, Optional<String> port) {
    Map<String, String> variables = new HashMap<>();
    host.ifPresent(value -> variables.put(ProcessHost.SERVICE_HOST_VARIABLE, value));
    port.ifPresent(value -> variables.put(ProcessHost.SERVICE_PORT_VARIABLE, value));
    return variables;
  }

  private static Arbitrary<String> variableNames() {
    Arbitrary<Character> first = Arbitraries.chars().range('A', 'Z').range('a', 'z').with('_');
    Arbitrary<String> rest = Arbitraries.strings()
        .withCharRange('A', 'Z').withCharRange('a', 'z').withCharRange('0', '9').withChars('_')
        .ofMaxLength(24);
    return Combinators.combine(first, rest).as((head, tail) -> head + tail);
  }

  private static boolean isInvalidKillSwitchValue(String value) {
    return !value.isBlank() && !ACCEPTED_SPELLINGS.contains(value.trim().toLowerCase(Locale.ROOT));
  }

  private static boolean isNotAServiceVariable(String name) {
    return !name.equals(ProcessHost.SERVICE_HOST_VARIABLE) && !name.equals(ProcessHost.SERVICE_PORT_VARIABLE);
  }

  private static void requireKillSwitchVariable(String killSwitchVariable) {
    Objects.requireNonNull(killSwitchVariable, "killSwitchVariable");
    if (!isNotAServiceVariable(killSwitchVariable)) {
      throw new IllegalArgumentException("killSwitchVariable=" + Render.quote(killSwitchVariable)
          + " is not valid: accepted values are variable names other than the service variables "
          + ProcessHost.SERVICE_HOST_VARIABLE + " and " + ProcessHost.SERVICE_PORT_VARIABLE
          + "; fix: name the variable the controller reads as its kill switch");
    }
  }
}

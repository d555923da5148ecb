/**
 * The decision's truth table as data, jqwik arbitraries for every spelling of its inputs, and a contract
 * that checks a controller's own start-up wiring against the table. Add the module in test scope.
 *
 * <p>Start at {@link io.github.electionpolicy.testkit.ElectionWiringContract}: a test class implements its
 * one method to run the controller's start-up path and inherits properties over every row of {@link
 * io.github.electionpolicy.testkit.TruthTable}. {@link io.github.electionpolicy.testkit.ElectionArbitraries}
 * and {@link io.github.electionpolicy.testkit.ElectionArbitraryProvider} generate {@link
 * io.github.electionpolicy.testkit.Scenario}s and rows for properties of your own.
 *
 * <p>Everything here is immutable and thread-safe.
 */
package io.github.electionpolicy.testkit;

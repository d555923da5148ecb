/**
 * The helpers election-policy's own tests share across modules, held once: {@link
 * io.github.electionpolicy.testsupport.Await} waits for a condition instead of sleeping, {@link
 * io.github.electionpolicy.testsupport.LogCapture} captures what slf4j-simple writes, and {@link
 * io.github.electionpolicy.testsupport.MarkdownBlocks} finds the fenced blocks of a doc that a test compares
 * with code. Not published: modules use it in test scope only.
 */
package io.github.electionpolicy.testsupport;

/**
 * The R program the R worker (r-worker.ts) runs in its one R session, as `R -f <file> --args
 * <control FIFO> <status FIFO> <cell file>`. It waits for a line on the control FIFO, runs the
 * cell file in the global environment, and answers on the status FIFO with JSON lines of
 * string fields: `ready` once, then per cell `started`, any `result`s, at most one `error`,
 * and `done` with `ok`, `error` or `abort`.
 *
 * It follows IRkernel (the `r` kernel of E2B's template, wire contract §1.8), which runs the
 * cell's top-level expressions in turn and stops at the first error:
 * - the value of each visible top-level expression is printed as the R console prints it (an
 *   explicit `print` writes to stdout as usual, like `cat`) and sent as a `result` text;
 * - an error's value is "Error in <call>: <message>\n", or "Error: <message>\n" for a syntax
 *   error or one raised at a cell's top level, whose call is the driver's own (evaluate >= 1.0
 *   drops such calls too); the traceback is that text, "Traceback:\n", then the cell's calls
 *   numbered, one a line (IRkernel sends them as list items, which E2B's server joins with
 *   nothing between them);
 * - a warning is written to stderr at once as "Warning message in <call>:\n“<message>”\n";
 * - an interrupt (SIGINT) ends the cell with status `abort`.
 *
 * The driver's functions live in an environment whose parent is base, so that a cell's
 * definitions (a global `send`, `cat`, …) cannot replace them, and `ls()` shows none of them.
 * Interrupts are held off except while a cell runs: a SIGINT that arrives between cells stays
 * pending and is taken, and ignored, before the next cell is `started`; the worker signals
 * only between `started` and `done`.
 */
export const R_DRIVER = String.raw`
local(envir = new.env(parent = baseenv()), {
  args <- commandArgs(trailingOnly = TRUE)
  control <- fifo(args[[1]], open = "r", blocking = TRUE)
  status <- fifo(args[[2]], open = "w", blocking = TRUE)
  cell_file <- args[[3]]

  # The contents of a JSON string: backslashes, quotes and control characters escaped. Bytes
  # are left as they are, so text that is not valid UTF-8 cannot stop a record.
  json_text <- function(text) {
    text <- gsub("\\", "\\\\", enc2utf8(text), fixed = TRUE, useBytes = TRUE)
    text <- gsub("\"", "\\\"", text, fixed = TRUE, useBytes = TRUE)
    for (code in 1:31) {
      text <- gsub(intToUtf8(code), sprintf("\\u%04x", code), text, fixed = TRUE, useBytes = TRUE)
    }
    text
  }

  # One record, written whole even when an interrupt arrives. The cell's output is flushed
  # first so that it reaches the worker ahead of the record.
  send <- function(...) suspendInterrupts({
    fields <- c(...)
    flush(stdout())
    flush(stderr())
    pairs <- paste0("\"", names(fields), "\":\"", json_text(fields), "\"", collapse = ",")
    writeLines(paste0("{", pairs, "}"), status, useBytes = TRUE)
    flush(status)
  })

  # The calls R gives to an error or warning raised by a cell's top-level code, and to a
  # syntax error: the driver's own, which the cell did not write.
  eval_call <- quote(eval(expr, globalenv()))
  parse_call <- quote(parse(text = code, keep.source = TRUE))

  where <- function(condition) {
    call <- conditionCall(condition)
    own <- is.null(call) || identical(call, eval_call) || identical(call, parse_call)
    if (own) "" else paste0(" in ", deparse(call, nlines = 1))
  }

  # The cell's own calls: those after the driver's eval, without the handler that asks (the
  # last call) and R's .handleSimpleError between them.
  cell_calls <- function(calls) {
    from <- Position(function(call) identical(call, eval_call), calls, right = TRUE)
    if (is.na(from)) return(list())
    calls <- calls[seq_len(length(calls) - 1)][-seq_len(from)]
    Filter(function(call) !identical(call[[1]], quote(.handleSimpleError)), calls)
  }

  describe_error <- function(condition, calls) {
    value <- paste0("Error", where(condition), ": ", conditionMessage(condition), "\n")
    calls <- cell_calls(calls)
    frames <- vapply(seq_along(calls), function(i) {
      paste0(i, ". ", paste(deparse(calls[[i]]), collapse = "\n   "))
    }, "")
    c(value = value, traceback = paste0(value, "Traceback:\n", paste(frames, collapse = "\n")))
  }

  report_warning <- function(condition) {
    if (getOption("warn", 0) >= 0) {
      cat(paste0("Warning message", where(condition), ":\n", dQuote(conditionMessage(condition)), "\n"),
        file = stderr())
    }
    invokeRestart("muffleWarning")
  }

  run_cell <- function() {
    failure <- NULL
    outcome <- tryCatch(allowInterrupts(withCallingHandlers({
      code <- readLines(cell_file, encoding = "UTF-8", warn = FALSE)
      for (expr in parse(text = code, keep.source = TRUE)) {
        shown <- withVisible(eval(expr, globalenv()))
        if (shown$visible) {
          printed <- utils::capture.output(print(shown$value))
          send(type = "result", text = paste(printed, collapse = "\n"))
        }
      }
      "ok"
    }, warning = report_warning, error = function(condition) {
      failure <<- describe_error(condition, sys.calls())
    })), error = function(condition) {
      # An error no calling handler saw, such as one raised by the warning handler.
      if (is.null(failure)) failure <<- describe_error(condition, list())
      "error"
    }, interrupt = function(condition) "abort")
    if (outcome == "error") send(type = "error", failure)
    outcome
  }

  send(type = "ready")
  suspendInterrupts(repeat {
    if (length(readLines(control, n = 1)) == 0) break
    # A SIGINT that came too late for the cell before is taken here, where it stops nothing.
    tryCatch(allowInterrupts(Sys.sleep(0)), interrupt = function(condition) NULL)
    send(type = "started")
    send(type = "done", status = run_cell())
  })
})
`

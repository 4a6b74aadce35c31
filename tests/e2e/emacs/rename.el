;;; rename.el --- eglot 1.9 (Debian's elpa-eglot on Emacs 28) renames a note through scholia  -*- lexical-binding: t -*-
;;
;; eglot 1.9 declares `documentChanges' but no `resourceOperations': it cannot rename a file.
;; Renaming a note from its title must still leave no link dangling: scholia moves the file
;; on disk, rewrites the closed linking notes there, and sends the open ones as edits of
;; their buffers, which eglot applies without asking (it asks before editing a file it has
;; no buffer for: a prompt here is a failure).
;;
;; Env: VAULT (a writable temp vault: Sourdough starter.md, Open.md, Closed.md),
;; SCHOLIA_BIN (the binary under test).

(require 'eglot)
(require 'project)

(defvar scholia-vault (file-name-as-directory (getenv "VAULT")))
(defvar scholia-bin (getenv "SCHOLIA_BIN"))
(defvar scholia-prompts nil "What eglot asked the user.")

(defun scholia-fail (fmt &rest args)
  (princ (concat "FAIL: " (apply #'format fmt args) "\n") #'external-debugging-output)
  (kill-emacs 1))

(defun scholia-log (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n") #'external-debugging-output))

(defun scholia-file (rel)
  (with-temp-buffer
    (insert-file-contents (expand-file-name rel scholia-vault))
    (buffer-string)))

(defun scholia-expect (what got expected)
  (unless (equal got expected)
    (scholia-fail "%s:\n  got      %S\n  expected %S" what got expected)))

;; Any question eglot asks is recorded and answered yes, so the script never blocks.
(fset 'y-or-n-p (lambda (prompt) (push prompt scholia-prompts) t))
(fset 'yes-or-no-p (lambda (prompt) (push prompt scholia-prompts) t))
(add-to-list 'auto-mode-alist '("\\.md\\'" . text-mode))
;; The vault is the project (no version control in the temp copy).
(add-hook 'project-find-functions (lambda (_dir) (cons 'transient scholia-vault)))
(setq eglot-sync-connect 30
      eglot-connect-timeout 60
      eglot-events-buffer-size 0)

(find-file (expand-file-name "Open.md" scholia-vault))
(eglot '(text-mode) (project-current) 'eglot-lsp-server (list scholia-bin "lsp") "markdown")
(unless (eglot-current-server) (scholia-fail "eglot did not connect to %s" scholia-bin))
(defvar scholia-server (eglot-current-server))
(scholia-log "connected: %s" (jsonrpc-name scholia-server))

;; The rename's capability is what eglot 1.9 sends: no resourceOperations.
(let ((caps (eglot-client-capabilities scholia-server)))
  (when (plist-get (plist-get (plist-get caps :workspace) :workspaceEdit) :resourceOperations)
    (scholia-fail "this eglot declares resourceOperations: the case is not tested")))

;; Wait until the index holds the vault: symbol search finds the linking note.
(let ((deadline (+ (float-time) 30)) found)
  (while (and (not found) (< (float-time) deadline))
    (setq found (append (jsonrpc-request scholia-server :workspace/symbol '(:query "Closed")) nil))
    (unless found (accept-process-output nil 0.2)))
  (unless found (scholia-fail "the vault was not indexed in 30 s")))

(find-file (expand-file-name "Sourdough starter.md" scholia-vault))
(unless (eglot-managed-p) (scholia-fail "Sourdough starter.md is not managed by eglot"))
(goto-char (point-min))
(search-forward "Sourdough")
(backward-char 3)
(eglot-rename "Levain")
;; Let the server's notifications after the move arrive.
(accept-process-output nil 0.5)

(when (file-exists-p (expand-file-name "Sourdough starter.md" scholia-vault))
  (scholia-fail "the note was not moved"))
(scholia-expect "the moved note" (scholia-file "Levain.md") "# Levain\n\nFlour and water.\n")
(scholia-expect "the closed linking note, on disk" (scholia-file "Closed.md")
                "# Closed\n\nMy [[Levain|starter]] and [[Levain#Feeding]].\n")
(scholia-expect "the open linking note, on disk (not written under the editor)"
                (scholia-file "Open.md") "# Open\n\nFeed the [[Sourdough starter]].\n")
(with-current-buffer (get-file-buffer (expand-file-name "Open.md" scholia-vault))
  (scholia-expect "the open linking note's buffer" (buffer-string) "# Open\n\nFeed the [[Levain]].\n"))
(when scholia-prompts
  (scholia-fail "eglot asked: %S" scholia-prompts))
(scholia-log "renamed: Levain.md, Closed.md rewritten on disk, Open.md's buffer edited")
(kill-emacs 0)

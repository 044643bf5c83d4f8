"""Small pieces every part of the harness uses and that know nothing of it: files written
whole or not at all (:mod:`.files`) and the clock in the form records carry (:mod:`.clock`)."""

//! Text people write for others to read (a seller's name and description, tags): one line of
//! characters that show. svc renders such text into documents agents act on (`llms.txt`, the
//! catalogue, 402 challenges, skills), so a line break could forge a heading or an instruction
//! there, and invisible characters could hide one, or pad a blank description past a length
//! rule.

/// Why a piece of text is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRefusal {
    /// A control character: a line break, a tab, NUL, escape.
    Control(char),
    /// A character that shows nothing: zero-width, bidirectional controls, tags, fillers.
    Invisible(char),
}

impl std::fmt::Display for TextRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextRefusal::Control(c) => {
                write!(f, "must be one line without control characters (found U+{:04X})", *c as u32)
            }
            TextRefusal::Invisible(c) => write!(f, "must not contain invisible characters (found U+{:04X})", *c as u32),
        }
    }
}

/// Checks one line of text: no control character (line breaks included) and no invisible one.
pub fn check_line(text: &str) -> Result<(), TextRefusal> {
    match text.chars().find(|c| c.is_control() || is_invisible(*c) || is_line_break(*c)) {
        None => Ok(()),
        Some(c) if is_invisible(c) => Err(TextRefusal::Invisible(c)),
        Some(c) => Err(TextRefusal::Control(c)),
    }
}

/// The characters of `text` that show: not whitespace, not invisible.
pub fn visible_chars(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace() && !c.is_control() && !is_invisible(*c)).count()
}

/// Line and paragraph separators, which are not control characters but break lines.
fn is_line_break(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}')
}

/// Unicode's format characters (general category Cf) and the fillers that render as nothing.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{AD}'
            | '\u{34F}'
            | '\u{600}'..='\u{605}'
            | '\u{61C}'
            | '\u{6DD}'
            | '\u{70F}'
            | '\u{890}'..='\u{891}'
            | '\u{8E2}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_line_of_visible_text_passes_and_breaks_controls_and_invisibles_do_not() {
        assert_eq!(check_line("Flow explainer — answers in plain words, 日本語 ok"), Ok(()));
        assert_eq!(check_line("a\nb"), Err(TextRefusal::Control('\n')));
        assert_eq!(check_line("a\r"), Err(TextRefusal::Control('\r')));
        assert_eq!(check_line("a\u{0}"), Err(TextRefusal::Control('\0')));
        assert_eq!(check_line("a\u{1b}[31m"), Err(TextRefusal::Control('\u{1b}')));
        assert_eq!(check_line("a\u{2028}b"), Err(TextRefusal::Control('\u{2028}')));
        assert_eq!(check_line("a\u{200B}b"), Err(TextRefusal::Invisible('\u{200B}')));
        assert_eq!(check_line("\u{202E}evil"), Err(TextRefusal::Invisible('\u{202E}')));
        assert_eq!(check_line("tag\u{E0041}"), Err(TextRefusal::Invisible('\u{E0041}')));
        assert!(TextRefusal::Invisible('\u{200B}').to_string().contains("U+200B"));
    }

    #[test]
    fn only_characters_that_show_are_counted() {
        assert_eq!(visible_chars("\u{200B}".repeat(20).as_str()), 0);
        assert_eq!(visible_chars("  a b\u{3000}c  "), 3);
        assert_eq!(visible_chars("日本語"), 3);
    }

    proptest! {
        #[test]
        fn text_that_passes_is_one_line_and_invisible_padding_never_counts(text in any::<String>()) {
            if check_line(&text).is_ok() {
                let breaks = text.chars().any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'));
                prop_assert!(!breaks, "one line");
            }
            let padded = format!("\u{200B}{text}\u{FEFF} \u{2060}\t\u{E0041}");
            prop_assert_eq!(visible_chars(&padded), visible_chars(&text));
            prop_assert!(check_line(&padded).is_err(), "padding is refused");
            prop_assert!(visible_chars(&text) <= text.chars().count(), "counts no more than there is");
        }
    }
}

"""The few phrases the offline integrator writes around the user's own sentences, in the
language of the note they come from: a Sources line ("X: taken from [[...]]."), a list
joined with "and", a sentence on nodes the note names, and a description when the note
has no sentence that says what it is about. Written in English into a Chinese node they
read as a foreign body, so each language the detector names has its own wording; any
other language gets English. Every Sources line says at least three words around its
links with a one-word label, as the guard asks of any writer (CJK counted two
characters a word). Pure data and pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultlink.markdown.language import language_of


@dataclass(frozen=True)
class Wording:
    """The phrases of one language; ``{what}``, ``{links}``, ``{title}`` and ``{said}`` are
    filled in, ``and_`` joins the last two items of a list and ``comma`` the others."""

    taken: str = "{what}: taken from {links}."
    confirmed: str = "{what}: confirmed again by {links}."
    corrected: str = "{what}: corrected in {links}."
    covered_one: str = "{said} is covered in {links}."
    covered_many: str = "{said} are covered in {links}."
    notes_on: str = "Notes on {title}"
    steps_for: str = "Steps for {title}"
    holds_for: str = "What holds for {title}"
    more_on: str = "more on {what}"
    day_note: str = "the note of {day}"
    and_: str = " and "
    comma: str = ", "
    stop: str = "."
    # for steps named by an imperative ("Rotate the search API key" -> "Steps to rotate
    # ..."); English only, the one language whose verbs are known (IMPERATIVE)
    steps_to: str = ""


WORDINGS: dict[str, Wording] = {
    "en": Wording(steps_to="Steps to {title}"),
    "de": Wording("{what}: übernommen aus {links}.", "{what}: erneut bestätigt durch {links}.",
                  "{what}: korrigiert in {links}.", "{said}: siehe {links}.",
                  "{said}: siehe {links}.", "Notizen zu {title}", "Schritte für {title}",
                  "Was für {title} gilt", "mehr zu {what}", "die Notiz vom {day}", " und "),
    "fr": Wording("{what} : tiré de {links}.", "{what} : confirmé à nouveau par {links}.",
                  "{what} : corrigé dans {links}.", "{said} : voir {links}.",
                  "{said} : voir {links}.", "Notes sur {title}", "Étapes pour {title}",
                  "Ce qui vaut pour {title}", "plus sur {what}", "la note du {day}", " et "),
    "es": Wording("{what}: tomado de {links}.", "{what}: confirmado de nuevo en {links}.",
                  "{what}: corregido en {links}.", "{said}: véase {links}.",
                  "{said}: véase {links}.", "Notas sobre {title}", "Pasos para {title}",
                  "Lo que vale para {title}", "más sobre {what}", "la nota del {day}", " y "),
    "it": Wording("{what}: tratto da {links}.", "{what}: confermato di nuovo da {links}.",
                  "{what}: corretto in {links}.", "{said}: vedi {links}.",
                  "{said}: vedi {links}.", "Note su {title}", "Passi per {title}",
                  "Ciò che vale per {title}", "altro su {what}", "la nota del {day}", " e "),
    "pt": Wording("{what}: tirado de {links}.", "{what}: confirmado de novo em {links}.",
                  "{what}: corrigido em {links}.", "{said}: veja {links}.",
                  "{said}: veja {links}.", "Notas sobre {title}", "Passos para {title}",
                  "O que vale para {title}", "mais sobre {what}", "a nota de {day}", " e "),
    "nl": Wording("{what}: overgenomen uit {links}.", "{what}: opnieuw bevestigd door {links}.",
                  "{what}: gecorrigeerd in {links}.", "{said}: zie {links}.",
                  "{said}: zie {links}.", "Notities over {title}", "Stappen voor {title}",
                  "Wat geldt voor {title}", "meer over {what}", "de notitie van {day}",
                  " en "),
    "ru": Wording("{what}: взято из {links}.", "{what}: снова подтверждено в {links}.",
                  "{what}: исправлено в {links}.", "{said}: см. {links}.",
                  "{said}: см. {links}.", "Заметки о {title}", "Шаги: {title}",
                  "Что верно для {title}", "ещё о {what}", "заметка от {day}", " и "),
    "zh": Wording("{what}：摘自{links}的记录。", "{what}：{links}再次证实了这一点。",
                  "{what}：已在{links}中更正。",
                  "{said}：参见{links}。", "{said}：参见{links}。", "关于{title}的笔记",
                  "{title}的步骤", "{title}的约定", "关于{what}的补充", "{day} 的笔记", "和", "、",
                  "。"),
    "ja": Wording("{what}：{links}からの引用。", "{what}：{links}で再び確認された。",
                  "{what}：{links}で訂正された。",
                  "{said}：{links}を参照。", "{said}：{links}を参照。", "{title}についてのメモ",
                  "{title}の手順", "{title}の決まり", "{what}の補足", "{day} のメモ", "と", "、",
                  "。"),
    "ko": Wording("{what}: {links}에서 가져옴.", "{what}: {links}에서 다시 확인됨.",
                  "{what}: {links}에서 정정됨.", "{said}: {links} 참고.", "{said}: {links} 참고.",
                  "{title}에 대한 메모", "{title} 절차", "{title}에 대한 규칙", "{what} 보충",
                  "{day} 메모", " 및 "),
}


def wording(language: str) -> Wording:
    """The phrases of ``language`` (an ISO 639-1 code); English for any other."""
    return WORDINGS.get(language, WORDINGS["en"])


def wording_of(text: str) -> Wording:
    """The phrases of the language ``text`` is written in."""
    return wording(language_of(text))
